"""One file fetched from a pinned URL and kept only with its pinned sha256.

The bytes go to `<name>.part` (a later call continues it with a Range request) and are checked
before the file takes its name; bytes that do not match are moved to `<name>.bad`. A file
already in place with its pinned size and sha256 is not fetched again.
"""

from __future__ import annotations

from pathlib import Path

from lme_bench.dataset.download import DownloadError, _fetch, file_sha256


def fetch_pinned(
    url: str, target: Path, sha256: str, size: int, by_hand: str, name: str | None = None
) -> None:
    """Fetch `url` into `target` unless it is there already; `by_hand` says how to get the
    file without lme-bench and `name` what to call it (its file name), for the errors."""
    if target.is_file() and target.stat().st_size == size and file_sha256(target) == sha256:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.part")
    try:
        _fetch(url, part)
    except Exception as exc:  # no network, HTTP errors, a full disk
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise DownloadError(
            f"cannot fetch {name or target.name} from {url} ({reason}); run the command again to"
            f" resume, or {by_hand}"
        ) from None
    actual = file_sha256(part)
    if actual != sha256:
        bad = target.with_name(f"{target.name}.bad")
        part.replace(bad)
        raise DownloadError(
            f"{target}: sha256 {actual} differs from the lme-bench sha256 {sha256}; the bytes"
            f" were moved to {bad.name}. Run the command again, or {by_hand}"
        )
    part.replace(target)
