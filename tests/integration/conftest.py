"""One Prefect server, process worker and deployment set for this package's tests (stopped
after its last test), a loopback fake OpenAI server for the models, and one completed run of
the smoke deployment that several tests read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.prefect_server import PrefectStack, prefect_stack
from tests.integration.runs import (
    KEY_ENV,
    KEY_VALUE,
    CompletedRun,
    FakeLlm,
    Replies,
    deployment_run,
    flow_run_id,
    write_config,
)
from tests.providers.fake_openai_server import serve


@pytest.fixture(scope="package")
def fake_llm() -> Iterator[FakeLlm]:
    replies = Replies()
    with serve([replies]) as (base_url, fake):
        yield FakeLlm(base_url, fake, replies)


@pytest.fixture(scope="package")
def prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectStack]:
    home = tmp_path_factory.mktemp("prefect-home")
    with prefect_stack(home, {KEY_ENV: KEY_VALUE}) as stack:
        yield stack


@pytest.fixture(scope="package")
def completed_run(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path_factory: pytest.TempPathFactory
) -> CompletedRun:
    folder = tmp_path_factory.mktemp("it-1")
    config = write_config(folder, fake_llm.base_url)
    before = len(fake_llm.fake.requests)
    cli = deployment_run(prefect, config, "it-1", limit=6)
    if cli.returncode != 0:
        pytest.fail(
            f"the smoke deployment run failed ({cli.returncode}):\n{cli.stdout}\n{cli.stderr}\n"
            f"worker log:\n{prefect.log_tail('worker', 120)}"
        )
    return CompletedRun(
        cli=cli,
        flow_run=flow_run_id(cli.stdout),
        folder=folder,
        config=config,
        run_dir=folder / "results" / "it-1",
        first_request=before,
        llm_requests=len(fake_llm.fake.requests) - before,
    )
