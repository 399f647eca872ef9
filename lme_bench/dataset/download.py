"""Download the official LongMemEval files from the cleaned release on the Hugging Face hub.

`lme-bench dataset download oracle|s|m [--to DIR]` fetches `longmemeval_oracle.json`,
`longmemeval_s_cleaned.json` or `longmemeval_m_cleaned.json` from the dataset repository
`xiaowu0162/longmemeval-cleaned` (revision `main`): `huggingface_hub` resolves the file and its
published sha256, then the bytes go to `<name>.part`, which a later run continues with a Range
request (the hub library itself drops a partial file). The bytes are checked by sha256 before
the file takes its name: against the value lme-bench knows (the S file), else against the sha256
the hub publishes for it (its LFS object id). Bytes that do not match are moved aside
(`<name>.bad`), never left where a run would read them.
`HF_ENDPOINT` selects another hub (a mirror).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from lme_bench.dataset.known import S_CLEANED_SHA256

REPO_ID = "xiaowu0162/longmemeval-cleaned"
REVISION = "main"
FILES = {
    "oracle": "longmemeval_oracle.json",
    "s": "longmemeval_s_cleaned.json",
    "m": "longmemeval_m_cleaned.json",
}
KNOWN_SHA256 = {"longmemeval_s_cleaned.json": S_CLEANED_SHA256}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class DownloadError(RuntimeError):
    """The file could not be fetched or did not match its sha256; says what to do instead."""


@dataclass(frozen=True, slots=True)
class Downloaded:
    path: Path
    sha256: str
    verified_against: str  # "lme-bench" (a sha256 we know) or "hub" (the hub's LFS sha256)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _by_hand(filename: str) -> str:
    return (
        f"download it by hand from https://huggingface.co/datasets/{REPO_ID}/resolve/{REVISION}/"
        f"{filename} and pass it with --dataset"
    )


def _metadata(filename: str, endpoint: str) -> tuple[str, int | None, str, str]:
    """(download URL, size, expected sha256, whose sha256 it is), from one request to the hub."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(REPO_ID, filename, repo_type="dataset", revision=REVISION, endpoint=endpoint)
    meta = get_hf_file_metadata(url, timeout=30)
    if filename in KNOWN_SHA256:
        return url, meta.size, KNOWN_SHA256[filename], "lme-bench"
    etag = (meta.etag or "").strip('"')
    if not _SHA256.match(etag):
        raise DownloadError(f"{url}: the hub gave no sha256 for {filename} to check it against")
    return url, meta.size, etag, "hub"


def _fetch(url: str, part: Path, attempts: int = 5) -> None:
    """GET `url` into `part`, continuing from what `part` holds (a Range request), retrying a
    dropped transfer where it broke off."""
    import httpx

    for attempt in range(attempts):
        start = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={start}-", "Accept-Encoding": "identity"} if start else {}
        try:
            with httpx.stream(
                "GET", url, headers=headers, follow_redirects=True, timeout=httpx.Timeout(30.0)
            ) as response:
                if response.status_code == 416:  # nothing left to fetch
                    return
                response.raise_for_status()
                resumed = start > 0 and response.status_code == 206
                with part.open("ab" if resumed else "wb") as out:
                    for block in response.iter_bytes():  # as received: a drop loses nothing
                        out.write(block)
            return
        except httpx.TransportError:
            if attempt + 1 == attempts:
                raise
            time.sleep(1.0)


def download(variant: str, to: Path) -> Downloaded:
    """Fetch one official file into `to` (resuming a partial `<name>.part`) and verify it."""
    if variant not in FILES:
        raise DownloadError(f"unknown variant {variant!r}: choose one of {', '.join(FILES)}")
    filename, endpoint = FILES[variant], _endpoint()
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise DownloadError(
            f"HF_HUB_OFFLINE is set, so {filename} cannot be fetched; unset it or "
            + _by_hand(filename)
        )
    to.mkdir(parents=True, exist_ok=True)
    path, part = to / filename, to / f"{filename}.part"
    try:
        url, size, expected, source = _metadata(filename, endpoint)
        fetched = path if path.exists() and path.stat().st_size == size else part
        if fetched is part:
            _fetch(url, part)
    except DownloadError:
        raise
    except Exception as exc:  # no network, hub errors, a full disk
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise DownloadError(
            f"cannot fetch {filename} from the Hugging Face hub at {endpoint} ({reason}); "
            f"run the command again to resume, or {_by_hand(filename)}"
        ) from None
    actual = file_sha256(fetched)
    if actual != expected:
        bad = path.with_name(path.name + ".bad")
        fetched.replace(bad)
        raise DownloadError(
            f"{path}: sha256 {actual} differs from the {source} sha256 {expected}; the bytes were "
            f"moved to {bad.name}. Run the command again, or {_by_hand(filename)}"
        )
    fetched.replace(path)
    return Downloaded(path, actual, source)
