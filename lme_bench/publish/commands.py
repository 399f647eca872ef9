"""The `bundle`, `verify` and `leaderboard` commands: arguments in, one line per outcome
out."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lme_bench.publish.errors import PublishError
from lme_bench.publish.verify import Check

DEFAULT_MIN_AGREEMENT = 0.95  # see docs/publishing.md: a hosted judge is not exactly repeatable

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def add_parsers(commands: Any) -> None:
    bundle = commands.add_parser(
        "bundle",
        help="pack a finished run into one archive with every file's sha256, signed with"
        " --sign; `bundle keygen --out KEY.pem` makes an Ed25519 key",
    )
    bundle.add_argument(
        "run",
        metavar="RUN",
        help="a run id under --results-dir, a run folder, or a run's URL (s3://bucket/runs/RUN)",
    )
    bundle.add_argument(
        "--results-dir", default="results", help="folder of run folders, or a results URL"
    )
    bundle.add_argument("--sign", type=Path, metavar="KEYFILE", help="Ed25519 private key (PEM)")
    bundle.add_argument(
        "--out",
        help="the archive, a path or a URL (default: RUN_ID.bundle.tar.gz here); keygen: the"
        " key, a local file",
    )
    verify = commands.add_parser(
        "verify",
        help="check a bundle: every file's sha256, the signature, the dataset, its figures"
        " from its own rows, with --official-repo the benchmark's own scorer, and with --rejudge"
        " its answers judged again by its judge",
    )
    verify.add_argument("bundle", metavar="BUNDLE", help="a bundle file, or its URL")
    verify.add_argument(
        "--dataset",
        type=Path,
        help="the dataset file or folder: its sha256 checked, the benchmark's section recomputed",
    )
    verify.add_argument(
        "--official-repo",
        type=Path,
        metavar="PATH",
        help="a checkout of the benchmark's official code (LongMemEval, LoCoMo, BEAM)",
    )
    verify.add_argument("--require-signature", action="store_true", help="an unsigned bundle fails")
    verify.add_argument(
        "--rejudge",
        action="store_true",
        help="judge the bundle's answers again with its judge (needs --dataset) and compare"
        " verdict by verdict",
    )
    verify.add_argument(
        "--config",
        type=Path,
        help="--rejudge: TOML config with the judge's [providers] endpoint, [limits], [judge]"
        " prompts",
    )
    verify.add_argument(
        "--min-agreement",
        type=_fraction,
        default=DEFAULT_MIN_AGREEMENT,
        metavar="F",
        help=f"--rejudge: the least share of verdicts that must agree (default"
        f" {DEFAULT_MIN_AGREEMENT})",
    )
    _export_parser(commands)
    board = commands.add_parser(
        "leaderboard",
        help="a static site of a folder of bundles: a table per benchmark, dataset and judge,"
        " every bundle verified, its report beside the page",
    )
    board.add_argument(
        "bundles", metavar="BUNDLES_DIR", help="a folder of *.tar.gz, or its URL (s3://…)"
    )
    board.add_argument("--out", type=Path, required=True, metavar="SITE_DIR", help="the site")
    board.add_argument(
        "--require-verified",
        action="store_true",
        help="exit 1 when a bundle is not verified or not readable (the site is written still)",
    )


def _export_parser(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="write a finished run in another record format: --eee, the Every Eval Ever schema"
        " (an aggregate log and its per-question samples)",
    )
    export.add_argument(
        "run",
        metavar="RUN",
        help="a run id under --results-dir, a run folder, or a run's URL (s3://bucket/runs/RUN)",
    )
    export.add_argument(
        "--results-dir", default="results", help="folder of run folders, or a results URL"
    )
    formats = export.add_mutually_exclusive_group(required=True)
    formats.add_argument(
        "--eee",
        action="store_true",
        help="Every Eval Ever 0.3.0: DIR/data/BENCHMARK/BACKEND/READER/UUID.json and"
        " UUID_samples.jsonl",
    )
    export.add_argument("--out", type=Path, required=True, metavar="DIR", help="where data/ goes")
    export.add_argument(
        "--organization",
        default="unknown",
        help="source_organization_name: who ran the evaluation (default: unknown)",
    )
    export.add_argument(
        "--first-party",
        action="store_true",
        help="the memory system's own developers ran it (default: third party)",
    )


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to 1, got {text!r}")
    return value


def _error(message: str) -> int:
    print(f"lme-bench: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _run_folder(run: str, results_dir: str) -> Path:
    """RUN under a local results folder, or copied from a results URL (finished runs only);
    RUN may be a run's URL itself (its results URL and run id)."""
    from lme_bench.config.storage_urls import default_work_dir, is_url
    from lme_bench.publish.pack import run_folder
    from lme_bench.publish.places import is_remote
    from lme_bench.results.run_mirror import pull_run

    if is_remote(run):
        results_dir, _, run = run.rstrip("/").rpartition("/")
    if not is_url(results_dir):
        return run_folder(run, Path(results_dir))
    found = pull_run(results_dir.rstrip("/"), default_work_dir(results_dir.rstrip("/")), run)
    assert found is not None  # required: a run without its manifest raised
    return found


def _bundle_to(run: str, results_dir: str, out: str | None, key: Path | None) -> tuple[str, Any]:
    """The run's bundle written to `out`, a path or a URL (there: packed in a temporary
    folder, then put whole); where it went and its manifest."""
    from lme_bench.publish.pack import bundle_run
    from lme_bench.publish.places import (
        bundle_name,
        check_target,
        is_remote,
        local_or_url,
        put_bundle,
    )

    if out is None or not is_remote(out):
        path = Path(local_or_url(out)) if out else None
        written, record = bundle_run(_run_folder(run, results_dir), path, key)
        return str(written), record
    url = out.rstrip("/")
    check_target(url)  # before the run is fetched and packed
    run_dir = _run_folder(run, results_dir)
    with tempfile.TemporaryDirectory(prefix="lme-bundle-") as folder:
        written, record = bundle_run(run_dir, Path(folder) / bundle_name(url), key)
        put_bundle(written, url)
    return url, record


def bundle_command(args: argparse.Namespace) -> int:
    from lme_bench.publish.places import is_remote
    from lme_bench.publish.signing import write_key
    from lme_bench.results.store import StorageError

    try:
        if args.run == "keygen":
            if args.out is None:
                return _error("bundle keygen needs --out KEYFILE: where the private key goes")
            if is_remote(args.out):
                return _error("bundle keygen writes the private key to a local file, not a URL")
            print(f"wrote {args.out}: Ed25519 key, fingerprint {write_key(Path(args.out))}")
            return 0
        out, record = _bundle_to(args.run, args.results_dir, args.out, args.sign)
    except (PublishError, StorageError) as exc:
        return _error(str(exc))
    signed = " (signed)" if args.sign else " (unsigned)"
    print(f"wrote {out}: {len(record['files'])} files of run {record['run_id']}{signed}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from lme_bench.publish.eee import export_eee
    from lme_bench.results.atomic import ResultsWriteError
    from lme_bench.results.store import StorageError

    try:
        run_dir = _run_folder(args.run, args.results_dir)
        done = export_eee(run_dir, args.out, args.organization, args.first_party)
    except (PublishError, StorageError, ResultsWriteError) as exc:
        return _error(str(exc))
    print(f"wrote {done.aggregate}: {done.results} evaluation results")
    print(f"wrote {done.samples}: {done.rows} rows (a question and a judge each)")
    return 0


# The check behind --rejudge, made of (dataset, config, min_agreement); the command line hands
# it in (it judges, so it sits above publishing).
Rejudge = Callable[[Path, Path | None, float], Check]


def verify_command(args: argparse.Namespace, rejudge: Rejudge | None = None) -> int:
    from lme_bench.publish.places import local_or_url
    from lme_bench.publish.verify import verify_bundle

    if args.rejudge and args.dataset is None:
        return _error(
            "--rejudge needs --dataset DATA: the dataset file the bundle's answers are judged"
            " against"
        )
    if args.config is not None and not args.rejudge:
        return _error("--config goes with --rejudge: it sets up the judge that judges again")
    if args.dataset is not None and not args.dataset.exists():
        return _error(f"{args.dataset}: no such dataset file or folder")
    further = None
    if args.rejudge:
        assert rejudge is not None  # the command line always hands it in
        further = rejudge(args.dataset, args.config, args.min_agreement)
    try:
        verdict = verify_bundle(
            local_or_url(args.bundle),
            args.dataset,
            args.official_repo,
            args.require_signature,
            further,
        )
    except PublishError as exc:
        return _error(str(exc))
    for line in verdict.held:
        print(f"ok: {line}")
    for line in verdict.unchecked:
        print(f"not checked: {line}")
    for line in verdict.problems:
        print(f"FAILED: {line}", file=sys.stderr)
    print("verified" if verdict.ok else f"not verified: {len(verdict.problems)} problem(s)")
    return 0 if verdict.ok else EXIT_FAILED


def leaderboard_command(args: argparse.Namespace) -> int:
    from lme_bench.publish.leaderboard import PAGE, build_site
    from lme_bench.publish.places import local_or_url

    try:
        site = build_site(local_or_url(args.bundles), args.out)
    except PublishError as exc:
        return _error(str(exc))
    for row in site.rows:
        if not row.verified:
            print(f"not verified: {row.bundle}: {'; '.join(row.problems)}", file=sys.stderr)
    for name, why in site.unread:
        print(f"not on the board: {name}: {why}", file=sys.stderr)
    verified = sum(r.verified for r in site.rows)
    print(
        f"wrote {site.out / PAGE}: {len(site.rows)} bundle(s) in {len(site.tables)} table(s),"
        f" {verified} verified, {len(site.unread)} unreadable"
    )
    failed = verified < len(site.rows) or bool(site.unread)
    return EXIT_FAILED if failed and args.require_verified else 0
