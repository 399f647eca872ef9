"""`verify --official-repo`: LongMemEval's own print_qa_metrics.py, unmodified, on the bundle's
eval-results file prints the figures of the bundle's summary; a label changed (and relisted)
makes the printer disagree, named. The checkout is LONGMEMEVAL_REPO (the tests that need it
skip without it); nothing of it is copied here."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from lme_bench.cli import main
from lme_bench.publish.pack import bundle_run
from tests.providers.fake_openai_server import serve
from tests.publish.runs import SAMPLE, json_of, make_run, tampered

CHECKOUT = os.environ.get("LONGMEMEVAL_REPO")
NAME = "hypotheses.jsonl.eval-results-gpt-4o"
needs_checkout = pytest.mark.skipif(
    not CHECKOUT or not (Path(CHECKOUT) / "src/evaluation/print_qa_metrics.py").is_file(),
    reason="set LONGMEMEVAL_REPO to a LongMemEval checkout (git clone"
    " https://github.com/xiaowu0162/LongMemEval)",
)


def _verdict(body: dict[str, object]) -> dict[str, str]:
    """yes or no by a hash of the prompt: some right, some wrong."""
    digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
    return {"content": "yes" if digest[0] % 2 else "no"}


@pytest.fixture(scope="module")
def officially_judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle of a run judged by gpt-4o-2024-08-06 (a loopback stand-in for its API)."""
    folder = tmp_path_factory.mktemp("official")
    with serve([_verdict]) as (url, _):
        config = folder / "judge.toml"
        config.write_text(
            '[models]\nqa = "fake:quote-memory"\njudge = "lab:gpt-4o-2024-08-06"\n'
            f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{url}"\n'
        )
        run = make_run(folder / "results", limit=8, config=config,
                       **{"models.judge": "lab:gpt-4o-2024-08-06"})  # fmt: skip
    out, _ = bundle_run(run, folder / "official.tar.gz")
    return out


def _verify(bundle: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(bundle), "--dataset", str(SAMPLE), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@needs_checkout
def test_the_official_printer_gives_the_bundles_figures(
    officially_judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(officially_judged, capsys, "--official-repo", str(CHECKOUT))
    assert code == 0, said
    assert "ok: official print_qa_metrics.py: 6 figures equal" in said
    assert (
        "its task average is nan (no questions of single-session-preference, multi-session)" in said
    )

    def flip(members: dict[str, bytes]) -> None:  # one verdict changed and relisted
        lines = [json.loads(x) for x in members[NAME].decode().splitlines()]
        lines[0]["autoeval_label"]["label"] = not lines[0]["autoeval_label"]["label"]
        members[NAME] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        record = json_of(members, "BUNDLE.json")
        record["files"][NAME]["sha256"] = hashlib.sha256(members[NAME]).hexdigest()
        members["BUNDLE.json"] = json.dumps(record).encode()

    code, said = _verify(tampered(officially_judged, tmp_path / "t.tar.gz", flip), capsys,
                         "--official-repo", str(CHECKOUT))  # fmt: skip
    assert code == 1
    assert f"FAILED: {NAME}: the official printer gives Overall Accuracy" in said


def test_without_the_printer_or_the_official_judge_it_fails_saying_why(
    officially_judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(officially_judged, capsys, "--official-repo", str(tmp_path))
    assert (
        code == 1 and "not a LongMemEval checkout (no src/evaluation/print_qa_metrics.py)" in said
    )
    printer = tmp_path / "src" / "evaluation" / "print_qa_metrics.py"
    printer.parent.mkdir(parents=True)
    printer.write_text("print('nothing')\n")

    def other_judge(members: dict[str, bytes]) -> None:
        del members[NAME]

    bundle = tampered(officially_judged, tmp_path / "o.tar.gz", other_judge)
    code, said = _verify(bundle, capsys, "--official-repo", str(tmp_path))
    assert code == 1 and "the official printer reads only gpt-4o-2024-08-06's verdicts" in said
