"""The `lme-bench` command line: run the benchmark flow, generate scale data."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import ScoreInputError
from lme_bench.benchmarks.registry import TITLES, known_titles
from lme_bench.compare import CompareError
from lme_bench.config.legacy_memory_keys import ConfigDeprecationWarning
from lme_bench.config.settings import ConfigError
from lme_bench.dataset.errors import DatasetError
from lme_bench.publish.commands import add_parsers as add_publish_parsers
from lme_bench.results.atomic import ResultsWriteError
from lme_bench.results.run_folder import RerunError
from lme_bench.score.command import add_parser as add_score_parser

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1
EXIT_REGRESSED = 3  # a watched figure fell against the baseline ([regression])


def _id_list(text: str) -> list[str]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("expected a comma-separated list of question ids")
    return ids


def _results_folder(text: str) -> Path | str:
    """--results-dir: a local folder, or a URL kept as text (Path("s3://b/x") would be the
    local folder s3:/b/x)."""
    from lme_bench.config.storage_urls import credential_problem, is_url

    if text.startswith("file://"):
        return Path(text.removeprefix("file://"))
    if is_url(text):
        problem = credential_problem(text, "--results-dir")
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return text.rstrip("/")
    return Path(text)


def _local_results(target: Path | str, run_ids: list[str] | None) -> Path:
    """The local folder a reader reads: `target` itself, or for a URL the working folder
    with `run_ids` (every finished run when None) copied from it."""
    from lme_bench.config.storage_urls import default_work_dir, is_url
    from lme_bench.results.run_mirror import pull_finished_runs, pull_run

    if not is_url(target):
        return Path(target)
    url, work = str(target), default_work_dir(str(target))
    if run_ids is None:
        return pull_finished_runs(url, work)
    for run_id in run_ids:
        pull_run(url, work, run_id)
    return work


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


# `lme-bench dataset download` variants: the benchmark each fetches files of
DOWNLOADS = {
    "oracle": "longmemeval",
    "s": "longmemeval",
    "m": "longmemeval",
    "locomo": "locomo",
    "beam-100k": "beam",
    "beam-500k": "beam",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lme-bench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    benchmarks = ", ".join(known_titles())  # the built-in ones and those packages register

    run = commands.add_parser(
        "run", help=f"run a benchmark ({benchmarks} or a 'module:Class' of yours) through the flow"
    )
    run.add_argument("config", type=Path, help="TOML run config, e.g. configs/default.toml")
    run.add_argument(
        "--dataset",
        type=Path,
        help=f"a benchmark's file or folder ({benchmarks}; default: from the config)",
    )
    run.add_argument("--run-id", help="run id (reuse one to rerun into the same folder)")
    run.add_argument("--results-dir", type=_results_folder, help="folder that holds run folders")
    run.add_argument("--questions", type=_id_list, help="only these question ids: ID,ID,…")
    run.add_argument("--limit", type=_positive, help="only the first N questions")
    run.add_argument(
        "--compare-to",
        metavar="RUN_ID|previous",
        help="compare with this run, or the previous completed run of the series; exits 3 when"
        " a figure [regression] watches fell",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="log every task run's state")

    rerun = commands.add_parser(
        "rerun", help="run a run again: only what failed or changed is redone (task cache)"
    )
    rerun.add_argument("run_id", help="the run to rerun (a folder under --results-dir)")
    rerun.add_argument("--results-dir", type=_results_folder, default=Path("results"))
    rerun.add_argument(
        "--failed-only",
        action="store_true",
        help="rerun only the questions that failed; the others' rows are kept as they are",
    )
    rerun.add_argument(
        "--base-url",
        action="append",
        default=[],
        metavar="PROVIDER=URL",
        help="where a [providers] model server is now, e.g. local=http://127.0.0.1:8081/v1 (the"
        " same model moved: results are kept, the move is recorded in config.json and the"
        " manifest)",
    )
    rerun.add_argument("-v", "--verbose", action="store_true", help="log every task run's state")

    gen = commands.add_parser("generate", help="write an S- or M-scale LongMemEval-format file")
    gen.add_argument("--scale", choices=("s", "m"), default="s")
    gen.add_argument("--questions", type=_positive, default=50, dest="n_questions")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--source", type=Path, help="questions to build on (default: the sample)")
    gen.add_argument("--out", type=Path, required=True)

    estimate = commands.add_parser(
        "estimate", help="model calls, tokens, cost and wall time of a run, calling no model"
    )
    estimate.add_argument("config", type=Path, help="TOML run config")
    estimate.add_argument(
        "--dataset",
        type=Path,
        help=f"a benchmark's file or folder ({benchmarks}; default: the config's)",
    )
    estimate.add_argument("--questions", type=_id_list, help="only these question ids")
    estimate.add_argument("--limit", type=_positive, help="only the first N questions")
    estimate.add_argument(
        "--latency", type=float, default=2.0, help="seconds a model call takes (default 2)"
    )

    downloadable = ", ".join(TITLES.get(b, b) for b in dict.fromkeys(DOWNLOADS.values()))
    dataset = commands.add_parser("dataset", help=f"the official files of {downloadable}")
    dataset_commands = dataset.add_subparsers(dest="dataset_command", required=True)
    fetch = dataset_commands.add_parser(
        "download",
        help="fetch an official file (LongMemEval's cleaned release, LoCoMo's data/locomo10.zip,"
        " BEAM's chats of one tier), verified by sha256",
    )
    fetch.add_argument("variant", choices=tuple(DOWNLOADS))
    fetch.add_argument("--to", type=Path, default=Path("data"), help="folder (default: data)")

    memory = commands.add_parser("memory", help="the embedded memory store")
    memory_commands = memory.add_subparsers(dest="memory_command", required=True)
    serve = memory_commands.add_parser(
        "serve", help="serve the embedded memory over MCP with Mycelian's tools"
    )
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default) or streamable HTTP at http://HOST:PORT/mcp",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")
    serve.add_argument("--port", type=_port, default=11546, help="HTTP: port (path /mcp)")
    serve.add_argument(
        "--path",
        type=Path,
        default=Path("results/memory.sqlite"),
        help="SQLite store (default: results/memory.sqlite)",
    )
    serve.add_argument(
        "--no-queue", action="store_true", help="apply writes before returning (no queue)"
    )
    serve.add_argument(
        "--search",
        choices=("bm25", "dense", "hybrid"),
        default="bm25",
        help="search_memories ranking (dense/hybrid need the optional extra)",
    )
    serve.add_argument(
        "--alpha", type=float, default=0.6, help="hybrid: weight of the dense score (0-1)"
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback address (needs LME_MEMORY_TOKEN and --allowed-host)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="HTTP: a Host header value to accept besides loopback's (repeatable)",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="URL",
        help="HTTP: an Origin header value to accept besides loopback's, e.g."
        " https://app.example.org (repeatable)",
    )

    compare = commands.add_parser(
        "compare", help="compare two runs' scores: per-type deltas with paired bootstrap intervals"
    )
    compare.add_argument("run_a", help="run id of A (the baseline)")
    compare.add_argument("run_b", help="run id of B (the change); deltas are B - A")
    compare.add_argument("--results-dir", type=_results_folder, default=Path("results"))
    compare.add_argument("--judge", help="whose labels (default: the LLM judge, else fallback)")
    compare.add_argument(
        "--allow-different-judges",
        action="store_true",
        help="compare runs judged by different judges or prompt versions",
    )
    compare.add_argument("--out", type=Path, help="output folder (default: RESULTS_DIR/compare)")
    compare.add_argument("--resamples", type=_positive, default=2000, help="bootstrap resamples")
    compare.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 3 when a figure [regression] watches fell from A to B",
    )
    compare.add_argument(
        "--config", type=Path, help="TOML config whose [regression] applies (default: defaults)"
    )
    _history_parser(commands)
    _judge_parser(commands)
    add_publish_parsers(commands)
    add_score_parser(commands)
    return parser


def _history_parser(commands: Any) -> None:
    history = commands.add_parser(
        "history", help="a series' runs, newest first: settings changed, figures, cost, failures"
    )
    history.add_argument("series", nargs="?", help="the series (default: the folder's only one)")
    history.add_argument("--results-dir", type=_results_folder, default=Path("results"))
    history.add_argument(
        "--html",
        action="store_true",
        help="also write RESULTS_DIR/series/SERIES/history.html: a trend chart per figure",
    )


def _judge_parser(commands: Any) -> None:
    judge = commands.add_parser("judge", help="judges: how far a successor is from the official")
    judge_commands = judge.add_subparsers(dest="judge_command", required=True)
    calibrate = judge_commands.add_parser(
        "calibrate",
        help="re-judge a reference judge's verdicts with candidate judges; a profile each",
    )
    calibrate.add_argument(
        "reference",
        type=Path,
        help="the official eval-results file (*.eval-results-gpt-4o), or a run folder judged"
        " by the official judge",
    )
    calibrate.add_argument(
        "--dataset", type=Path, required=True, help="the LongMemEval JSON the answers are of"
    )
    calibrate.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="PROVIDER:MODEL",
        help="a candidate judge (repeatable)",
    )
    calibrate.add_argument(
        "--config", type=Path, help="TOML config: [providers], [judge] prompts, [limits]"
    )
    calibrate.add_argument(
        "--results-dir",
        type=_results_folder,
        help="where profiles go (default: the config's results_dir)",
    )
    calibrate.add_argument("--resamples", type=_positive, default=2000, help="bootstrap resamples")
    calibrate.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 1-65535, got {text}")
    return value


def _serve_error(message: str) -> int:
    print(f"lme-bench: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _memory_serve(args: argparse.Namespace) -> int:
    from lme_bench.reference_memory.http_access import (
        TOKEN_ENV,
        AccessError,
        check_token,
        is_loopback,
        transport_security,
    )

    token: str | None = None
    if args.transport == "http":
        if not is_loopback(args.host) and not args.allow_remote:
            return _serve_error(
                f"--host {args.host} is not a loopback address; pass --allow-remote (with a"
                f" bearer token in {TOKEN_ENV} and --allowed-host) to expose the memory server"
                " on the network"
            )
        try:
            transport_security(args.host, args.allowed_host, args.allowed_origin)
            if os.environ.get(TOKEN_ENV, "").strip():
                token = check_token(os.environ[TOKEN_ENV])
        except AccessError as exc:
            return _serve_error(str(exc))
        if args.allow_remote and token is None:
            return _serve_error(
                f"--allow-remote needs a bearer token: set {TOKEN_ENV} (clients then send"
                " Authorization: Bearer <token>)"
            )
        if args.allow_remote and not args.allowed_host:
            return _serve_error(
                "--allow-remote needs at least one --allowed-host NAME[:PORT]: the Host header"
                " value remote clients send (only loopback names are accepted otherwise)"
            )
    if not 0.0 <= args.alpha <= 1.0:
        return _serve_error(f"--alpha must be between 0 and 1, got {args.alpha}")
    from lme_bench.reference_memory.mcp_server import serve

    serve(
        args.path,
        args.transport,
        args.host,
        args.port,
        queue_writes=not args.no_queue,
        search=args.search,
        alpha=args.alpha,
        allowed_hosts=args.allowed_host,
        allowed_origins=args.allowed_origin,
        token=token,
    )
    return 0


def _run(args: argparse.Namespace, flows: FlowLoader) -> int:
    from lme_bench.run.request import RunRequest

    request = RunRequest(
        config=str(args.config),
        dataset=str(args.dataset) if args.dataset else None,
        run_id=args.run_id,
        results_dir=str(args.results_dir) if args.results_dir else None,
        questions=args.questions,
        limit=args.limit,
        compare_to=args.compare_to,
    )
    return _start(request, flows, args.verbose)


def _moved_endpoints(given: list[str], recorded: dict[str, Any], run_id: str) -> dict[str, str]:
    """`--base-url PROVIDER=URL` as overrides of the providers the run recorded."""
    providers = recorded.get("providers") or {}
    moved: dict[str, str] = {}
    for text in given:
        name, sep, url = text.partition("=")
        if not sep or not name or not url.strip():
            raise ConfigError(f"--base-url {text!r}: expected PROVIDER=URL, e.g. local=http://…/v1")
        if name not in providers:
            known = ", ".join(sorted(providers)) or "none"
            raise ConfigError(
                f"--base-url {text!r}: run {run_id} has no [providers.{name}] (its providers:"
                f" {known})"
            )
        moved[f"providers.{name}.base_url"] = url.strip()
    return moved


def _rerun(args: argparse.Namespace, flows: FlowLoader) -> int:
    """The run's recorded request with its recorded settings (whatever the environment says
    now): only what failed or changed since is redone."""
    from lme_bench.results.recorded_settings import recorded_run
    from lme_bench.results.run_folder import read_manifest
    from lme_bench.run.request import RunRequest
    from lme_bench.run.rerun import failed_question_ids

    run_dir = _local_results(args.results_dir, [args.run_id]) / args.run_id
    recorded = recorded_run(run_dir)
    if recorded is None:
        read_manifest(run_dir)  # names the missing folder or manifest
        raise RerunError(f"{run_dir}: the run recorded no settings to rerun")
    overrides = dict(recorded["request"].get("overrides") or {})
    overrides |= _moved_endpoints(args.base_url, recorded["settings"], args.run_id)
    request = RunRequest.model_validate(
        recorded["request"]
        | {
            "overrides": overrides,
            "run_id": args.run_id,
            "results_dir": str(args.results_dir),
            "failed_only": args.failed_only,
            "shards": 1,
            "replay": True,
        }
    )
    if args.failed_only:
        failed = failed_question_ids(run_dir, request.questions)
        print(f"rerunning {len(failed)} failed question(s) of {args.run_id}")
    return _start(request, flows, args.verbose)


class _NoTracebackFor(logging.Filter):
    """Log records of expected failures, which the CLI reports in one line, keep their message
    but lose the traceback (the Prefect API still receives it)."""

    def __init__(self, *kinds: type[BaseException]) -> None:
        super().__init__()
        self.kinds = kinds

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], self.kinds):
            record.exc_info, record.exc_text = None, None
        return True


def _quiet_tracebacks(*kinds: type[BaseException]) -> None:
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _NoTracebackFor) for f in handler.filters):
            handler.addFilter(_NoTracebackFor(*kinds))


@dataclass(frozen=True)
class Flow:
    """How the command starts a run: the flow (`run`) and its exception for failed questions."""

    run: Callable[[Any], dict[str, Any]]
    failures: type[Exception]
    regressed: type[Exception] | None = None  # a run whose watched figures fell: exit 3
    # Starts, given the request, what the run needs in the background while the dataset is
    # checked (the temporary Prefect server); returns ready(ok): wait for it, or stop it.
    warm_up: Callable[[Any], Callable[[bool], None]] = lambda request: lambda ok: None


FlowLoader = Callable[[], Flow]


class _NeverRaised(Exception):
    """Stands for a flow's regression exception where the flow has none."""


def _no_flow() -> Flow:
    raise ConfigError("starting a run needs the lme-bench command (lme_bench_flows.command:main)")


def _start(request: Any, flows: FlowLoader, verbose: bool = False) -> int:
    """Check the request's config and data, then run the flow in this process: a progress line
    instead of one log line per task run unless `verbose`; at the end the summary, the results
    folder and the run's headline."""
    from lme_bench.results.recorded_settings import check_settings
    from lme_bench.run.collect import error_text
    from lme_bench.run.failure_origin import (
        short_traceback,
        show_tracebacks_once,
        tell_at_the_end,
        traceback_shown,
    )
    from lme_bench.run.rerun import pulled_run
    from lme_bench.run.steps import plan_run, prepare_questions

    settings = request.settings()
    plan = plan_run(settings)
    pulled_run(settings, plan.run_id)  # a finished run at a results URL, to go on with
    check_settings(plan.run_dir, settings, request.failed_only)  # before any work
    request = request.model_copy(update={"run_id": plan.run_id})

    # Offline by design: no telemetry from the temporary Prefect server, and none of the
    # cancellation tracebacks it logs while shutting down.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not os.environ.get("PREFECT_API_URL"):
        os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
    flow = flows()  # the flow lives outside the core package, which never imports Prefect
    ready = flow.warm_up(request)  # the temporary server starts while the data are checked
    try:
        if not request.failed_only:  # fail fast on bad input
            prepare_questions(plan, request.questions, request.limit)
    except BaseException:
        ready(False)
        raise
    ready(True)
    _quiet_tracebacks(ResultsWriteError, flow.failures, *filter(None, [flow.regressed]))
    terminal = [*logging.getLogger().handlers, *logging.getLogger("prefect").handlers]
    show_tracebacks_once(terminal)
    if not verbose:  # task runs' state lines; failures (warnings and errors) still show
        logging.getLogger("prefect.task_runs").setLevel(logging.WARNING)
        tell_at_the_end(terminal)  # what stops the run is printed once, below
    regressed = flow.regressed or _NeverRaised
    url = settings.run.results_url
    where = f"{url}/{plan.run_id}" if url else plan.run_dir
    try:
        result = flow.run(request)
    except regressed as exc:  # every file written; the summary leads with what fell
        print((plan.run_dir / "summary.md").read_text())
        print(f"results: {where}", flush=True)
        print(f"lme-bench: {exc}", file=sys.stderr)
        return EXIT_REGRESSED
    except ResultsWriteError as exc:
        print(f"lme-bench: error: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except flow.failures as exc:
        print(f"lme-bench: {exc}", file=sys.stderr)
        summary = plan.run_dir / "summary.md"
        if summary.exists():
            print(summary.read_text())
        return EXIT_RUN_FAILED
    except Exception as exc:
        if verbose and not traceback_shown(exc):
            raise
        if not traceback_shown(exc):  # once: through lme-bench's and the user's code
            print(short_traceback(exc), file=sys.stderr)
        print(f"lme-bench: error: {error_text(exc)}", file=sys.stderr)
        return EXIT_RUN_FAILED
    print((Path(result["run_dir"]) / "summary.md").read_text())
    print(f"results: {where}")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    from lme_bench.benchmarks.split import splitter_for
    from lme_bench.dataset.shards import prepare_dataset, select_questions
    from lme_bench.report.estimate import estimate_markdown
    from lme_bench.run.estimate import estimate_run
    from lme_bench.run.request import RunRequest
    from lme_bench.run.steps import bundled_sample

    dataset = str(args.dataset) if args.dataset else None
    settings = RunRequest(config=str(args.config), dataset=dataset).settings()
    path = settings.dataset.path or bundled_sample()
    cache = settings.dataset.cache_dir or settings.run.results_dir / ".cache" / "datasets"
    split, kind = splitter_for(settings.dataset.benchmark, path)  # as a run splits the file
    refs = select_questions(prepare_dataset(path, cache, split, kind), args.questions, args.limit)
    builds = [r.build for r in refs]
    found = estimate_run((r.load() for r in refs), settings, args.latency, builds)
    print(estimate_markdown(found), end="")
    return 0


def _download(args: argparse.Namespace) -> int:
    from lme_bench.dataset.download import DownloadError, download
    from lme_bench.dataset.download_beam import TIERS, download_beam, tier_files
    from lme_bench.dataset.download_locomo import download_locomo

    try:
        if args.variant in TIERS:
            done = download_beam(args.variant, args.to)
            print(
                f"{done.path}: {len(tier_files(args.variant))} files, each verified against the"
                f" sha256 lme-bench pins; run it with --dataset {done.path}"
            )
            return 0
        own = {"locomo": download_locomo}  # variants with a download of their own
        fetch = own.get(args.variant) or functools.partial(download, args.variant)
        done = fetch(args.to)
    except DownloadError as exc:
        print(f"lme-bench: error: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    against = {"lme-bench": "the sha256 lme-bench knows", "hub": "the hub's published sha256"}
    print(f"{done.path}: sha256 {done.sha256}, verified against {against[done.verified_against]}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from lme_bench.dataset.generate import generate_dataset

    stats = generate_dataset(
        args.out, n_questions=args.n_questions, scale=args.scale, seed=args.seed, source=args.source
    )
    print(
        f"wrote {args.out}: {stats.questions} questions, {stats.sessions} sessions, "
        f"{stats.turns} turns, {stats.bytes / 1e6:.1f} MB in {stats.seconds:.1f} s"
    )
    return 0


def _compare(args: argparse.Namespace) -> int:
    from lme_bench.config.settings import load_settings
    from lme_bench.report.compare import compare_runs
    from lme_bench.results.run_mirror import publish_files

    gate = load_settings(args.config).regression if args.fail_on_regression else None
    local = _local_results(args.results_dir, [args.run_a, args.run_b])
    output = compare_runs(
        args.run_a,
        args.run_b,
        results_dir=local,
        judge=args.judge,
        allow_different_judges=args.allow_different_judges,
        out=args.out,
        resamples=args.resamples,
        seed=args.seed,
    )
    print(output.markdown)
    url = None if isinstance(args.results_dir, Path) or args.out else args.results_dir
    print("wrote: " + ", ".join(publish_files(url, local, list(output.paths))))
    if gate is not None:
        return _regression_gate(gate, output.comparison)
    return 0


def _history(args: argparse.Namespace) -> int:
    from lme_bench.report.history import history_markdown, overview_markdown
    from lme_bench.report.history_html import write_history_html
    from lme_bench.results.history import HistoryError, series_history, series_overview
    from lme_bench.results.run_mirror import publish_files

    try:
        local = _local_results(args.results_dir, None)
        found = series_overview(local)
        if args.series is None and len(found) > 1:
            print(overview_markdown(local, found), end="")
            return 0
        history = series_history(local, args.series)
    except HistoryError as exc:
        print(f"lme-bench: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(history_markdown(history), end="")
    if args.html:
        url = None if isinstance(args.results_dir, Path) else args.results_dir
        print(f"wrote: {publish_files(url, local, [write_history_html(history)])[0]}")
    return 0


def _regression_gate(gate: Any, comparison: Any) -> int:
    """The verdict of `gate` ([regression] of --config, else the defaults and
    LME_REGRESSION__*) on B against A, as the last line; 3 when a watched figure fell."""
    from lme_bench.compare.gate import check_regression
    from lme_bench.report.regression import regression_message

    verdict = check_regression(comparison, gate.watch, gate.min_drop)
    print(f"lme-bench: {regression_message(verdict)}", file=sys.stderr)
    return EXIT_REGRESSED if verdict.regressed else 0


def _judge_calibrate(args: argparse.Namespace) -> int:
    from lme_bench.config.settings import load_settings
    from lme_bench.judge.calibration.calibrate import calibrate
    from lme_bench.report.judge_profile import calibration_markdown

    settings = load_settings(args.config)
    out_dir = args.results_dir or settings.run.results_dir
    try:
        done = calibrate(
            args.reference,
            args.dataset,
            args.judge,
            settings,
            out_dir,
            resamples=args.resamples,
            seed=args.seed,
        )
    except ResultsWriteError as exc:
        print(f"lme-bench: error: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    for found in done:
        print(calibration_markdown(found.profile, str(found.path)))
    return 0


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A config deprecation as one `lme-bench: warning: …` line; other warnings as Python
    shows them."""
    if issubclass(category, ConfigDeprecationWarning):
        print(f"lme-bench: warning: {message}", file=sys.stderr)
        return
    text = warnings.formatwarning(message, category, filename, lineno, line)
    (file or sys.stderr).write(text)


def main(argv: list[str] | None = None, flows: FlowLoader = _no_flow) -> int:
    """The command line; `flows` loads the Prefect flow that `run` and `rerun` start."""
    args = _parser().parse_args(argv)
    warnings.filterwarnings("default", category=ConfigDeprecationWarning)  # once per key
    warnings.showwarning = _show_warning
    try:
        if args.command == "run":
            return _run(args, flows)
        if args.command == "rerun":
            return _rerun(args, flows)
        if args.command == "memory":
            return _memory_serve(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "history":
            return _history(args)
        if args.command == "dataset":
            return _download(args)
        if args.command == "estimate":
            return _estimate(args)
        if args.command == "judge":
            return _judge_calibrate(args)
        if args.command == "score":
            from lme_bench.score.command import score_command

            return score_command(args)
        if args.command in ("bundle", "verify", "leaderboard", "export"):
            from lme_bench.publish import commands as publish

            if args.command == "verify" and args.rejudge:  # it judges: the score layer's
                from lme_bench.score.rejudge import rejudge_check

                return publish.verify_command(args, rejudge_check)
            chosen = {
                "bundle": publish.bundle_command,
                "verify": publish.verify_command,
                "export": publish.export_command,
            }
            return chosen.get(args.command, publish.leaderboard_command)(args)
        return _generate(args)
    except (ConfigError, DatasetError, ScoreInputError, CompareError, RerunError) as exc:
        print(f"lme-bench: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
