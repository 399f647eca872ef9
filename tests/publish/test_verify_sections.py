"""`lme-bench verify --dataset` on LoCoMo and BEAM bundles: their own sections of summary.json
(LoCoMo's official F1 by category, BEAM's rubric scores by ability) computed again from the
bundle's rows and the dataset's gold by each benchmark's own figures hook; an edited figure
fails naming it; without the dataset the section is said to be left unchecked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lme_bench.cli import main
from lme_bench.publish.pack import bundle_run
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.publish.boards import beam_bundle
from tests.publish.runs import json_of, make_run, tampered
from tests.publish.test_verify import _relisted

LOCOMO_REPO = os.environ.get("LOCOMO_REPO")
needs_locomo = pytest.mark.skipif(
    not LOCOMO_REPO,
    reason="set LOCOMO_REPO to a LoCoMo checkout (git clone -b code"
    " https://github.com/snap-research/locomo)",
)


BEAM_REPO = os.environ.get("BEAM_REPO")
needs_beam = pytest.mark.skipif(
    not BEAM_REPO,
    reason="set BEAM_REPO to a BEAM checkout (git clone https://github.com/mohammadtavakoli78/BEAM)",
)


def _verify(bundle: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(bundle), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture(scope="module")
def locomo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A LoCoMo run's bundle and its dataset."""
    folder = tmp_path_factory.mktemp("locomo")
    data = write_json(folder / "locomo10.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    run = make_run(folder / "results", "loc", **{"dataset.path": str(data)})
    out, _ = bundle_run(run, folder / "loc.tar.gz")
    return out, data


@pytest.fixture(scope="module")
def beam(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A BEAM run's bundle (judged by the rubric judge stand-in) and its chat folder."""
    folder = tmp_path_factory.mktemp("beam")
    return beam_bundle(folder, folder / "beam.tar.gz")


@pytest.mark.parametrize("which", ["locomo", "beam"])
def test_the_benchmarks_section_is_computed_again_with_the_dataset(
    which: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, dataset = request.getfixturevalue(which)
    code, said = _verify(bundle, capsys)
    assert code == 0, said
    assert f"not checked: summary.json's {which} section: its figures need the dataset" in said
    code, said = _verify(bundle, capsys, "--dataset", str(dataset))
    assert code == 0, said
    assert "each as its rows and the dataset's gold give it" in said
    assert "not checked" not in said


def test_an_edited_locomo_f1_fails_naming_it(
    locomo: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, dataset = locomo

    def edit(members: dict[str, bytes], overall: bool) -> None:
        summary = json_of(members, "summary.json")
        category = next(iter(summary["locomo"]["categories"]))
        summary["locomo"]["categories"][category]["f1"] = 0.987
        if overall:
            summary["locomo"]["overall_f1"] = 0.876
        members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
        _relisted(members, "summary.json")

    edited = tampered(bundle, tmp_path / "e.tar.gz", lambda m: edit(m, overall=True))
    code, said = _verify(edited, capsys, "--dataset", str(dataset))
    assert code == 1
    assert "FAILED: summary.json: locomo.overall_f1 is 0.876; the rows give" in said
    assert ".f1 is 0.987; the rows give" in said
    # Without the dataset: the overall F1 is in the headline, so the headline names it; a
    # category's F1 is not, and goes unseen, verify saying what it left aside.
    code, said = _verify(edited, capsys)
    assert code == 1 and "FAILED: summary.json: headline is" in said
    category_only = tampered(bundle, tmp_path / "c.tar.gz", lambda m: edit(m, overall=False))
    code, said = _verify(category_only, capsys)
    assert code == 0 and "not checked: summary.json's locomo section" in said
    code, said = _verify(category_only, capsys, "--dataset", str(dataset))
    assert code == 1 and ".f1 is 0.987; the rows give" in said


def test_an_edited_beam_score_fails_naming_it(
    beam: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, dataset = beam

    def edit(members: dict[str, bytes]) -> None:
        summary = json_of(members, "summary.json")
        judge = summary["beam"]["judges"]["fake:rubric-judge"]
        judge["mean_over_abilities"] = 0.111
        members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
        _relisted(members, "summary.json")

    code, said = _verify(tampered(bundle, tmp_path / "e.tar.gz", edit), capsys, "--dataset",
                         str(dataset))  # fmt: skip
    assert code == 1
    assert (
        "FAILED: summary.json: beam.judges.fake:rubric-judge.mean_over_abilities is 0.111;"
        " the rows give"
    ) in said


def _category_f1(members: dict[str, bytes]) -> None:
    summary = json_of(members, "summary.json")
    category = next(iter(summary["locomo"]["categories"]))
    summary["locomo"]["categories"][category]["f1"] = 0.987
    members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
    _relisted(members, "summary.json")


@needs_locomo
def test_locomos_own_scorer_gives_the_bundles_f1_and_names_an_edited_one(
    locomo: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, _ = locomo
    code, said = _verify(bundle, capsys, "--official-repo", str(LOCOMO_REPO))
    assert code == 0, said
    assert "ok: official task_eval/evaluation.py on 1 conversation files:" in said
    assert "F1 figures equal" in said
    edited = tampered(bundle, tmp_path / "e.tar.gz", _category_f1)
    code, said = _verify(edited, capsys, "--official-repo", str(LOCOMO_REPO))
    assert code == 1
    assert ".f1 is 0.987; the official scorer gives" in said


def test_a_folder_that_is_no_locomo_checkout_is_named(
    locomo: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(locomo[0], capsys, "--official-repo", str(tmp_path))
    assert code == 1
    assert f"FAILED: {tmp_path}: not a LoCoMo checkout (no task_eval/evaluation.py)" in said


@needs_beam
def test_beams_own_report_wants_whole_chats(
    beam: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(beam[0], capsys, "--official-repo", str(BEAM_REPO))
    assert code == 1
    assert "reports the 10 abilities in each chat; the bundle's chats hold 3" in said


@needs_beam
@pytest.mark.slow
def test_beams_own_report_gives_the_bundles_means_and_names_an_edited_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a real chat of the checkout (100K chat 1, its 20 questions, every ability)."""
    chat = Path(str(BEAM_REPO)) / "chats" / "100K" / "1"
    config = tmp_path / "beam.toml"
    config.write_text(f'[judge]\nbeam_repo = "{BEAM_REPO}"\n')
    run = make_run(tmp_path / "results", "beam", limit=20, config=config,
                   **{"dataset.path": str(chat), "models.judge": "fake:rubric-judge"})  # fmt: skip
    bundle, _ = bundle_run(run, tmp_path / "beam.tar.gz")
    code, said = _verify(bundle, capsys, "--official-repo", str(BEAM_REPO))
    assert code == 0, said
    assert "ok: official src/evaluation/report_results.py on 1 chats: 10 means per ability" in said

    def edit(members: dict[str, bytes]) -> None:
        summary = json_of(members, "summary.json")
        tier = summary["beam"]["judges"]["fake:rubric-judge"]["tiers"]["100K"]
        tier["abilities"]["summarization"] = 0.321
        members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
        _relisted(members, "summary.json")

    edited = tampered(bundle, tmp_path / "e.tar.gz", edit)
    code, said = _verify(edited, capsys, "--official-repo", str(BEAM_REPO))
    assert code == 1
    assert (
        "beam.judges.fake:rubric-judge.tiers.100K.abilities.summarization is 0.321; the official"
        " report gives"
    ) in said


def test_a_folder_that_is_no_beam_checkout_is_named(
    beam: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(beam[0], capsys, "--official-repo", str(tmp_path))
    assert code == 1
    assert f"FAILED: {tmp_path}: not a BEAM checkout (no src/evaluation/report_results.py)" in said


def test_a_locomo_bundles_verdicts_are_judged_again_from_its_predictions(
    locomo: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, dataset = locomo
    code, said = _verify(bundle, capsys, "--dataset", str(dataset), "--rejudge",
                         "--min-agreement", "1")  # fmt: skip
    assert code == 0, said
    assert "ok: judged again by fake:match-judge: 4 of 4 verdicts agree (100.0%)" in said


def test_a_beam_bundle_is_judged_again_score_by_score(
    beam: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, dataset = beam
    config = bundle.parent / "beam.toml"  # the run's [judge] beam_repo
    code, said = _verify(bundle, capsys, "--dataset", str(dataset), "--rejudge",
                         "--config", str(config), "--min-agreement", "1")  # fmt: skip
    assert code == 0, said
    assert "ok: judged again by fake:rubric-judge: 4 of 4 scores equal (100.0%)" in said


def test_another_dataset_leaves_the_section_unchecked_saying_so(
    locomo: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = write_json(tmp_path / "locomo10.json", [listed_sample("conv-9")])
    code, said = _verify(locomo[0], capsys, "--dataset", str(other))
    assert code == 1
    assert f"FAILED: {other}: not the run's dataset" in said
    assert "not checked: summary.json's locomo section: its figures need the run's dataset" in said
