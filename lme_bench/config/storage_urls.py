"""Telling a storage URL (s3://bucket/runs) from a local path, and refusing credentials in one."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

# scheme://… ; a Windows drive (C:\ or C:/) has one letter and no double slash
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_url(target: object) -> bool:
    """Whether `target` names a place by URL (s3://, gs://, az://, memory://, file://)."""
    return isinstance(target, str) and bool(_URL.match(target))


def redacted(url: str) -> str:
    """The URL without any user or password part, for messages."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=host).geturl()


def credential_problem(url: str, setting: str) -> str | None:
    """Why `url` may not be used for `setting` (it carries credentials), or None."""
    if "@" in urlsplit(url).netloc:
        return (
            f"{setting}: {redacted(url)} was given with credentials in the URL; give them "
            "through the environment only (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, "
            "GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*), never in a config or a command"
        )
    return None


def default_work_dir(url: str) -> Path:
    """The local working folder of runs whose results go to `url`: under the user's cache,
    named by the URL's scheme and digest (never a folder named like the URL)."""
    scheme = url.split("://", 1)[0].lower()
    digest = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "lme-bench" / "work" / f"{scheme}-{digest}"
