"""`fake:<name>` finds every policy by name, the ones that script one backend's prompts (kept
beside that backend's adapter) included, and loads those only when they are named."""

from __future__ import annotations

import subprocess
import sys

import pytest
from langchain_core.messages import HumanMessage

from lme_bench.config.settings import Settings
from lme_bench.providers.factory import model_for
from lme_bench.providers.fake_policies import BACKEND_POLICIES, fake_policy, policy_names


@pytest.mark.parametrize("name", policy_names())
def test_every_fake_name_finds_its_policy(name: str) -> None:
    assert callable(fake_policy(name))


def test_a_backend_fake_answers_through_the_factory() -> None:
    model, _, _ = model_for("memory", Settings(models={"memory": "fake:mem0-extractor"}))
    prompt = "## New Messages\nuser: I moved to Lyon. I adopted a cat.\nassistant: Nice!"
    reply = model.invoke([HumanMessage(prompt)])
    assert "moved to Lyon." in str(reply.content)
    assert "adopted a cat." in str(reply.content)


def test_an_unknown_fake_name_is_none_and_the_backend_fakes_load_only_when_named() -> None:
    assert fake_policy("no-such-policy") is None
    assert set(BACKEND_POLICIES) <= set(policy_names())
    code = (
        "import sys\n"
        "from lme_bench.providers.fake_policies import fake_policy\n"
        "fake_policy('note-taker')\n"
        "print(sorted(m for m in sys.modules if m.startswith('lme_bench.backends')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
