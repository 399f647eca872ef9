"""One typed settings tree: a TOML file, overridden by `LME_*` environment variables.

`LME_RUN__RESULTS_DIR=/tmp/r` overrides `[run] results_dir`. Unknown keys are rejected, and
secrets (API keys) are read only from the environment, never from the TOML file.
"""

from __future__ import annotations

import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from lme_bench.benchmarks.registry import unknown_benchmark
from lme_bench.config.backend_names import unknown_backend
from lme_bench.config.legacy_memory_keys import move_legacy_keys
from lme_bench.config.mcp_section import McpSettings as McpSettings
from lme_bench.config.regression_section import RegressionSettings
from lme_bench.config.run_section import STAGES, CacheSettings, LimitSettings, RunSettings, Stage
from lme_bench.config.storage_urls import credential_problem

_toml_data: ContextVar[dict[str, Any]] = ContextVar("lme_toml_data", default={})  # noqa: B039
_read_environment: ContextVar[bool] = ContextVar("lme_read_environment", default=True)


class ConfigError(ValueError):
    """A bad config file or override; the message names the file and the key."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemorySettings(_Section):
    backend: str = Field(
        default="embedded",
        description="a built-in backend (lme-bench backends lists them), a name registered under"
        " the lme_bench.backends entry-point group, or 'package.module:Class'",
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the backend's own parameters, checked by its Params (built-ins: see"
        " [memory.params] by backend below)",
    )
    embedding_model: str = Field(
        default="all-MiniLM-L6-v2",
        description="the embedding model of any backend that embeds (embedded dense and hybrid"
        " search, mem0, LangGraph, Graphiti): the packaged MiniLM, 'all-MiniLM-L6-v2-static'"
        " (distilled from it: fast, less accurate), or a local sentence-transformers model"
        " directory",
    )
    build_store: str | None = Field(
        default=None,
        description="folder or fsspec URL (s3://, gs://, az://) where each memory build of the"
        " embedded store is saved once ingested, and fetched from (sha256-checked) by a later"
        " stage on a worker that lacks it; unset: <results URL>/memory-builds for results at a"
        " URL and an ingestion that calls a model, else none (a raw build is remade where a"
        " worker lacks it; with local results the memories stay in this machine's"
        " memory.sqlite)",
    )

    @field_validator("build_store")
    @classmethod
    def _no_credentials_in_store(cls, value: str | None) -> str | None:
        problem = credential_problem(value, "[memory] build_store") if value else None
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="before")
    @classmethod
    def _old_keys_to_params(cls, data: Any) -> Any:
        # A replayed recording is read as it was written, with no deprecation to report.
        if isinstance(data, dict):
            return move_legacy_keys(data, announce=_read_environment.get())
        return data

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, name: str) -> str:
        problem = unknown_backend(name)
        if problem is not None:
            raise ValueError(problem)
        return name


class IngestSettings(_Section):
    """How sessions reach the memory: verbatim (raw) or through the LLM memory agent."""

    mode: Literal["raw", "context-only", "agentic"] = "raw"
    window_messages: int = Field(
        default=6, ge=0, le=50, description="agentic: recent messages shown with each turn"
    )
    context_every: int = Field(
        default=6, ge=1, le=100, description="agentic: ask for put_context every N messages"
    )
    max_tool_calls_per_turn: int = Field(default=4, ge=1, le=50)
    max_steps_per_session: int = Field(
        default=400, ge=4, le=100_000, description="agent graph steps per session (recursion cap)"
    )
    bootstrap_entries: int = Field(
        default=10, ge=0, le=50, description="recent entries read before a session"
    )
    require_context_call: bool = Field(
        default=True,
        description="the call that writes a session's context (context-only, and agentic at"
        " session end) names put_context as the tool the model must call; false for a server"
        " that rejects a named tool_choice",
    )


class DatasetSettings(_Section):
    path: Path | None = Field(
        default=None,
        description="a benchmark file (LongMemEval, LoCoMo, BEAM …); default: the sample",
    )
    benchmark: str | None = Field(
        default=None,
        description="longmemeval, locomo, beam, a name registered under the lme_bench.benchmarks"
        " entry points, 'module:Class' or 'path/to/file.py:Class'; default: the benchmark that"
        " recognises the file",
    )
    cache_dir: Path | None = Field(
        default=None, description="where per-question splits live; default <results_dir>/.cache"
    )

    @field_validator("benchmark")
    @classmethod
    def _known_benchmark(cls, name: str | None) -> str | None:
        problem = unknown_benchmark(name) if name is not None else None
        if problem is not None:
            raise ValueError(problem)
        return name


class RetrievalSettings(_Section):
    top_k: int = Field(
        default=1000, ge=50, le=100_000, description="entries ranked per question (≥ 50)"
    )
    attribute: bool = Field(
        default=True,
        description="score a system whose hits carry no session (or turn) by matching hit text"
        " to the haystack, reported as 'attributed'; false: such rows are not applicable",
    )


class QaSettings(_Section):
    """How a question is answered from memory (search limits are recorded with every answer)."""

    strategy: Literal["single", "two-pass", "multi-query"] = "single"
    top_ke: int = Field(default=10, ge=0, le=25, description="entries per search (Mycelian ≤ 25)")
    top_kc: int = Field(default=3, ge=1, le=10, description="context snapshots per search")
    refine_top_ke: int = Field(default=5, ge=0, le=25, description="two-pass: second search")
    refine_top_kc: int = Field(default=2, ge=1, le=10)
    max_queries: int = Field(default=4, ge=1, le=8, description="multi-query: queries proposed")
    rerank: bool = Field(default=False, description="let the QA model rerank merged entries")
    max_context_chars: int = Field(default=40_000, ge=1_000, description="reader prompt budget")
    prompts_dir: Path | None = Field(default=None, description="reader prompts; default ours")
    batch: bool = Field(
        default=False,
        description="single strategy: every reader request as one job of the provider's batch"
        " API (half price at OpenAI), after every search; items it fails are answered call by"
        " call",
    )
    batch_poll_s: float = Field(
        default=60.0, gt=0, description="seconds between two looks at a running batch job"
    )


class JudgeSettings(_Section):
    """LLM judge options; the model is [models] judge (no judge model: the no-LLM fallback)."""

    prompts_dir: Path | None = Field(default=None, description="judge prompts; default ours")
    official_repo: Path | None = Field(
        default=None,
        description="a LongMemEval checkout: judge with its own get_anscheck_prompt (official)",
    )
    beam_repo: Path | None = Field(
        default=None,
        description="a BEAM checkout (mohammadtavakoli78/BEAM): BEAM questions are judged with"
        " its own rubric prompt (src/prompts.py) and event-equivalence messages"
        " (src/evaluation/compute_metrics.py), read at run time; needed to judge BEAM with an"
        " LLM judge",
    )
    repeats: int = Field(default=1, ge=1, le=10, description="judge each answer N times")
    second_model: str | None = Field(default=None, description="a second judge, for agreement")
    fallback: bool = Field(default=True, description="also score with the no-LLM fallback")
    profile: Path | None = Field(
        default=None,
        description="a judge profile of [models] judge (lme-bench judge calibrate): the run"
        " shows its agreement with the official judge and an estimate of the official accuracy",
    )
    batch: bool = Field(
        default=False,
        description="send every judge request as one job of the provider's batch API (half"
        " price at OpenAI); items it fails are judged call by call",
    )
    batch_poll_s: float = Field(
        default=60.0, gt=0, description="seconds between two looks at a running batch job"
    )

    @model_validator(mode="after")
    def _one_prompt_source(self) -> JudgeSettings:
        if self.prompts_dir is not None and self.official_repo is not None:
            raise ValueError("set prompts_dir or official_repo, not both")
        return self


class PriceSettings(_Section):
    """Price of a model in some currency per million tokens (for cost per question)."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


# The provider kinds, each one class in lme_bench.providers.kinds (its registry checks the two
# name the same kinds, in this order).
ProviderKind = Literal["openai", "openai-compatible", "anthropic", "bedrock", "fake"]
PROVIDER_KINDS: tuple[str, ...] = get_args(ProviderKind)


class ProviderSettings(_Section):
    """A named model provider, e.g. a local OpenAI-compatible server (vLLM, Ollama, …)."""

    kind: ProviderKind = "openai-compatible"
    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint …/v1; anthropic: API root; bedrock: runtime"
        " endpoint",
    )
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key (never the key)"
    )
    region: str | None = Field(default=None, description="bedrock: AWS region")
    latency_s: float = Field(default=0.0, ge=0.0, description="fake: seconds per call")
    batch_s3_uri: str | None = Field(
        default=None,
        description="bedrock batch jobs: s3://bucket/prefix their input and output files go under",
    )
    batch_role_arn: str | None = Field(
        default=None, description="bedrock batch jobs: the IAM role Bedrock reads and writes S3 as"
    )

    @model_validator(mode="after")
    def _latency_only_for_fake(self) -> ProviderSettings:
        if self.latency_s and self.kind != "fake":
            raise ValueError(
                f"latency_s simulates a slow model and is only for kind = 'fake', "
                f"not kind = {self.kind!r}"
            )
        return self


OFFICIAL_JUDGE = "openai:gpt-4o-2024-08-06"


def _none_means_unset(value: Any) -> Any:
    return None if isinstance(value, str) and value.strip().lower() in ("", "none") else value


class OutputCaps(_Section):
    """The most output tokens one reply may take, per role: every request carries its cap, so
    a model that does not stop cannot run on until its context is full."""

    agent: int = Field(
        default=2048,
        ge=16,
        description="the memory agent: tool calls, or a whole context document in context-only",
    )
    qa: int = Field(default=1024, ge=16, description="the reader's answer, reasoning included")
    memory: int = Field(
        default=4096, ge=16, description="the memory system's own calls (extraction JSON)"
    )

    def for_role(self, role: str) -> int | None:
        """The cap of `role`; None for a role this table does not cap (the judge)."""
        cap = getattr(self, role, None)
        return cap if isinstance(cap, int) else None


def _one_cap_for_all(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return dict.fromkeys(OutputCaps.model_fields, value)
    return value


class ModelsSettings(_Section):
    """Models by role, as "provider:model" strings; unset roles are not used."""

    agent: str | None = None
    memory: str | None = Field(
        default=None, description="the memory system's own model (mem0, LangMem, Graphiti)"
    )
    qa: str | None = None
    judge: Annotated[str | None, BeforeValidator(_none_means_unset)] = Field(
        default=OFFICIAL_JUDGE,
        description='the official judge by default; "none" scores with the no-LLM fallback only',
    )
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = None
    max_tokens: Annotated[OutputCaps, BeforeValidator(_one_cap_for_all)] = Field(
        default_factory=lambda: OutputCaps(),
        description="output tokens per reply, by role (a number sets every role's); the judge's"
        " is the official 10",
    )
    timeout_s: float = Field(default=120.0, gt=0)
    retry_attempts: int = Field(default=6, ge=1, le=20, description="calls per request in all")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LME_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    memory: MemorySettings = MemorySettings()
    ingest: IngestSettings = IngestSettings()
    dataset: DatasetSettings = DatasetSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    run: RunSettings = RunSettings()
    cache: CacheSettings = CacheSettings()
    limits: LimitSettings = LimitSettings()
    qa: QaSettings = QaSettings()
    judge: JudgeSettings = JudgeSettings()
    prices: dict[str, PriceSettings] = Field(
        default_factory=dict, description='"provider:model" -> price per million tokens'
    )
    models: ModelsSettings = ModelsSettings()
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    regression: RegressionSettings = RegressionSettings()

    @property
    def stages(self) -> tuple[Stage, ...]:
        if self.run.stages is not None:
            return tuple(s for s in STAGES if s in self.run.stages)
        wanted: set[Stage] = {"ingest", "retrieval", "report"}
        if self.models.qa:
            wanted |= {"answer", "judge"}
        return tuple(s for s in STAGES if s in wanted)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Explicit overrides (init arguments) > LME_* environment > the TOML file; a replay of
        # recorded settings reads no environment.
        toml_file = InitSettingsSource(settings_cls, init_kwargs=_toml_data.get())
        if not _read_environment.get():
            return init_settings, toml_file
        return init_settings, env_settings, toml_file

    def redacted(self) -> dict[str, Any]:
        """The settings as JSON-ready data, with every secret masked."""
        return self.model_dump(mode="json")


def _origin(loc: tuple[Any, ...], source: str, explicit: dict[str, Any]) -> str:
    """Where a bad value came from: an LME_* variable, an explicit override, or the file."""
    keys = [str(part) for part in loc]
    env_names = {name.upper() for name in os.environ if name.upper().startswith("LME_")}
    for n in range(len(keys), 0, -1):  # the variable itself, or one holding its section
        name = "LME_" + "__".join(keys[:n]).upper()
        if name in env_names:
            return f"environment {name}"
    target: Any = explicit
    for key in keys:
        if not isinstance(target, dict) or key not in target:
            break
        target = target[key]
    else:
        if keys:
            return "override (command line or run request)"
    inside = sorted(n for n in env_names if keys and n.startswith("LME_" + "__".join(keys).upper()))
    return f"{source} with environment {', '.join(inside)}" if inside else source


def _describe(exc: ValidationError, source: str, explicit: dict[str, Any]) -> str:
    lines = []
    for error in exc.errors():
        key = ".".join(str(p) for p in error["loc"]) or "(top level)"
        lines.append(f"{_origin(error['loc'], source, explicit)}: {key}: {error['msg']}")
    return "\n".join(lines)


def load_settings(path: Path | None, **overrides: Any) -> Settings:
    """Read `path` (TOML), apply environment overrides, then non-None keyword overrides.

    Overrides are dotted keys, e.g. ``load_settings(p, **{"run.id": "x"})``.
    """
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        source = str(path)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such config file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except OSError as exc:  # a folder, no permission
            raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from None
    return _build(data, source, overrides, environment=True)


def replay_settings(recorded: dict[str, Any], source: str, **overrides: Any) -> Settings:
    """Settings as a run recorded them (`recorded`, from `source`), with non-None dotted
    overrides; the environment is not read, so the replay is what was run."""
    return _build(recorded, source, overrides, environment=False)


def _build(
    data: dict[str, Any], source: str, overrides: dict[str, Any], *, environment: bool
) -> Settings:
    explicit: dict[str, Any] = {}
    try:
        for dotted, value in overrides.items():
            if value is None:
                continue
            *sections, key = dotted.split(".")
            if not sections or not all(sections) or not key:
                raise ConfigError(f"override {dotted!r}: expected a dotted key like 'qa.strategy'")
            target = explicit
            for section in sections:
                target = target.setdefault(section, {})
            target[key] = value
        token = _toml_data.set(data)
        reading = _read_environment.set(environment)
        try:
            settings = Settings(**explicit)
        finally:
            _read_environment.reset(reading)
            _toml_data.reset(token)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source, explicit)) from None
    return settings
