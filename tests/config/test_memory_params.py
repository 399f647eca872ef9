"""The built-in backends take `[memory.params]` as plugins do, checked by their own Params; the
old `[memory] path / search / alpha / vault` and `[memory.mcp]` still work, each with one
deprecation message giving the new spelling."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from lme_bench.backends.builtin_params import (
    EmbeddedParams,
    McpParams,
    builtin_params,
    memory_path,
    search_params,
)
from lme_bench.backends.registry import backend_class, backend_params
from lme_bench.cli import main
from lme_bench.config.legacy_memory_keys import ConfigDeprecationWarning
from lme_bench.config.settings import ConfigError, Settings, load_settings, replay_settings
from lme_bench.ingest.fingerprint import ingest_fingerprint, memory_identity
from lme_bench.results.recorded_settings import differing_keys
from lme_bench.run.cache_keys import _stage_settings


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(f'[run]\nresults_dir = "{tmp_path}"\n' + text)
    return path


def _quietly(path: Path) -> Settings:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigDeprecationWarning)
        return load_settings(path)


def test_embedded_params_are_checked_by_its_params(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        '[memory]\nbackend = "embedded"\n[memory.params]\n'
        f'path = "{tmp_path / "m.sqlite"}"\nsearch = "hybrid"\nalpha = 0.3\nvault = "v"\n',
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigDeprecationWarning)  # the new spelling: no warning
        settings = load_settings(path)
    params = builtin_params(settings)
    assert params == EmbeddedParams(
        path=tmp_path / "m.sqlite", search="hybrid", alpha=0.3, vault="v"
    )
    assert memory_path(settings) == tmp_path / "m.sqlite"


def test_an_unknown_or_bad_embedded_param_is_one_error_naming_it(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, '[memory.params]\nserach = "dense"\n'))
    with pytest.raises(ConfigError, match=r"\[memory.params\] serach: Extra inputs.*'search'"):
        builtin_params(settings)
    with pytest.raises(ConfigError, match=r"backend 'embedded': \[memory.params\] serach"):
        backend_params(backend_class("embedded"), settings.memory.params)
    bad_alpha = load_settings(_config(tmp_path, "[memory.params]\nalpha = 2\n"))
    with pytest.raises(ConfigError, match=r"\[memory.params\] alpha: .*less than or equal to 1"):
        memory_identity(bad_alpha)


def test_mcp_params_need_a_server(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, '[memory]\nbackend = "mcp"\n'))
    with pytest.raises(ConfigError, match=r"needs \[memory.params\] url"):
        builtin_params(settings)
    stdio = load_settings(
        _config(tmp_path, '[memory]\nbackend = "mcp"\n[memory.params]\ntransport = "stdio"\n')
    )
    with pytest.raises(ConfigError, match=r"needs \[memory.params\] command"):
        builtin_params(stdio)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            '[memory]\nsearch = "hybrid"\n',
            '[memory.params]\nsearch = "hybrid"\n',
            '[memory] search is deprecated; write it as [memory.params] search = "hybrid"',
        ),
        (
            "[memory]\nalpha = 0.25\n",
            "[memory.params]\nalpha = 0.25\n",
            "[memory] alpha is deprecated; write it as [memory.params] alpha = 0.25",
        ),
        (
            '[memory]\npath = "elsewhere/m.sqlite"\n',
            '[memory.params]\npath = "elsewhere/m.sqlite"\n',
            '[memory] path is deprecated; write it as [memory.params] path = "elsewhere/m.sqlite"',
        ),
        (
            '[memory]\nbackend = "mcp"\nvault = "v"\n[memory.mcp]\nurl = "http://h:1/mcp"\n',
            '[memory]\nbackend = "mcp"\n[memory.params]\nvault = "v"\nurl = "http://h:1/mcp"\n',
            '[memory.mcp] is deprecated; write its keys in [memory.params]: url = "http://h:1/mcp"',
        ),
    ],
)
def test_an_old_key_works_with_one_message_naming_the_new_spelling(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    with pytest.warns(ConfigDeprecationWarning) as caught:
        settings = load_settings(_config(tmp_path, old))
    texts = [str(w.message) for w in caught]
    assert message in texts
    assert len(texts) == len(set(texts)) == old.count(" = ") - old.count("backend")  # one a key
    today = _quietly(_config(tmp_path, new))
    assert builtin_params(settings) == builtin_params(today)
    assert ingest_fingerprint(settings) == ingest_fingerprint(today)
    assert _stage_settings("retrieval", settings) == _stage_settings("retrieval", today)


def test_an_old_environment_variable_names_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LME_MEMORY__SEARCH", "dense")
    with pytest.warns(ConfigDeprecationWarning, match="set LME_MEMORY__PARAMS__SEARCH instead"):
        settings = load_settings(_config(tmp_path, ""))
    assert search_params(settings).search == "dense"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            '[memory]\nsearch = "bm25"\n[memory.params]\nsearch = "hybrid"\n',
            "[memory] search and [memory.params] search are one setting given twice",
        ),
        (
            '[memory]\nbackend = "mcp"\n[memory.mcp]\nurl = "http://a/mcp"\n'
            '[memory.params]\nurl = "http://b/mcp"\n',
            "[memory.mcp] url and [memory.params] url are one setting given twice",
        ),
        (
            '[memory]\nbackend = "langgraph"\nsearch = "hybrid"\n',
            "[memory] search = \"hybrid\" is a parameter of backend 'embedded'"
            " ([memory.params] search); backend 'langgraph' does not take it",
        ),
        (
            '[memory]\nbackend = "langgraph"\npath = "x.sqlite"\n',
            "set [run] results_dir to move them",
        ),
    ],
)
def test_both_spellings_or_a_key_another_backend_does_not_take_are_errors(
    tmp_path: Path, text: str, words: str
) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        _quietly(path)
    assert str(path) in str(caught.value) and words in str(caught.value)


def test_an_old_key_at_its_default_for_another_backend_is_dropped_with_a_message(
    tmp_path: Path,
) -> None:
    path = _config(tmp_path, '[memory]\nbackend = "langgraph"\nsearch = "bm25"\n')
    with pytest.warns(ConfigDeprecationWarning, match="backend 'langgraph' does not use it"):
        settings = load_settings(path)
    assert settings.memory.params == {}


def test_settings_recorded_with_the_old_keys_replay_silently_and_compare_equal(
    tmp_path: Path,
) -> None:
    # What a run recorded before [memory.params] took these keys (every key, at its value).
    recorded = {
        "run": {"results_dir": str(tmp_path)},
        "memory": {
            "backend": "mcp",
            "params": {},
            "path": None,
            "vault": "v",
            "search": "bm25",
            "alpha": 0.6,
            "embedding_model": "all-MiniLM-L6-v2",
            "mcp": {
                "transport": "streamable_http",
                "url": "http://h:1/mcp",
                "command": None,
                "args": [],
                "env": {},
                "headers": {},
                "headers_from_env": {},
                "timeout_s": 60.0,
            },
        },
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigDeprecationWarning)
        replayed = replay_settings(recorded, "config.json")
    assert builtin_params(replayed) == McpParams(url="http://h:1/mcp", vault="v")
    today = _quietly(
        _config(
            tmp_path,
            '[memory]\nbackend = "mcp"\n[memory.params]\n'
            'transport = "streamable_http"\nurl = "http://h:1/mcp"\nvault = "v"\n',
        )
    )
    recorded_in_full = today.redacted() | {"memory": recorded["memory"]}
    assert differing_keys(recorded_in_full, today, new_judge=False) == []


def test_the_command_line_shows_each_deprecation_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, '[memory]\nsearch = "bm25"\nalpha = 0.5\n')
    assert main(["estimate", str(path), "--limit", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("lme-bench: warning: ") == 2
    new_spelling = '[memory.params] search = "bm25"'
    assert f"lme-bench: warning: [memory] search is deprecated; write it as {new_spelling}" in err
    assert (
        "lme-bench: warning: [memory] alpha is deprecated; write it as [memory.params] alpha = 0.5"
        in err
    )


def test_a_run_recorded_with_the_old_keys_is_named_like_one_configured_today() -> None:
    from lme_bench.results.memory_identity import memory_identity as named

    old = {"backend": "embedded", "params": {}, "path": None, "search": "hybrid", "alpha": 0.6}
    today = {"backend": "embedded", "params": {"search": "hybrid", "alpha": 0.6}}
    assert named(old) == named(today)
    assert named(today)["params"] == {"search": "hybrid"}  # alpha at its default
    assert named({"backend": "mem0", "params": {"infer": False}})["params"] == {"infer": False}
