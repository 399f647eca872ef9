"""The weekly deployment's requests keep a new run id each week: neither a request the docs
show for it nor the deployment's own pins a run id, and the models the docs name in overrides
are the ones the run uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from lme_bench.run.request import RunRequest

ROOT = Path(__file__).resolve().parents[2]
PREFECT_DOC = ROOT / "docs" / "prefect.md"
WEEKLY_PARAM = re.compile(r"deployment run 'benchmark/weekly' --param request='(?P<json>[^']+)'")


def _weekly_requests() -> list[dict[str, object]]:
    """The requests the docs show for the weekly deployment, then the deployment's own."""
    shown = [json.loads(m["json"]) for m in WEEKLY_PARAM.finditer(PREFECT_DOC.read_text())]
    assert shown, f"{PREFECT_DOC}: no request for the weekly deployment"
    deployments = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    (weekly,) = [d for d in deployments["deployments"] if d["name"] == "weekly"]
    assert weekly["schedules"]
    return [*shown, weekly["parameters"]["request"]]


def test_the_weekly_requests_set_no_run_id_and_use_their_models() -> None:
    for asked in _weekly_requests():
        settings = RunRequest.model_validate(asked).settings()
        assert settings.run.id is None, asked
        overrides = asked.get("overrides") or {}
        assert isinstance(overrides, dict)
        for dotted, value in overrides.items():
            section, key = dotted.split(".")
            assert getattr(getattr(settings, section), key) == value


def test_a_config_run_id_holds_against_a_null_override_as_the_docs_say() -> None:
    text = " ".join(PREFECT_DOC.read_text().split())
    assert "An override of `run.id` to null does not lift it" in text
    pinned = RunRequest(config=str(ROOT / "configs/openai.toml"), overrides={"run.id": None})
    assert pinned.settings().run.id == "openai"
