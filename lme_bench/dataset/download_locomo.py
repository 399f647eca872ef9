"""Download LoCoMo's data from its GitHub repository, pinned by commit and sha256.

`lme-bench dataset download locomo [--to DIR]` fetches `data/locomo10.zip` (the ten
conversations, one file each, with their questions) from snap-research/locomo at the commit
that added it; lme-bench reads the zip as it is. The data is CC BY-NC 4.0: it is fetched on
the user's request and never shipped with lme-bench. The bytes go to `locomo10.zip.part`
(a later run continues it with a Range request) and are checked against the sha256 lme-bench
pins before the file takes its name; bytes that do not match are moved to `locomo10.zip.bad`.
`LOCOMO_BASE_URL` replaces `https://raw.githubusercontent.com` (a mirror).
"""

from __future__ import annotations

import os
from pathlib import Path

from lme_bench.dataset.download import Downloaded
from lme_bench.dataset.pinned_download import fetch_pinned

REPO = "snap-research/locomo"
COMMIT = "e76cdff4a04fce19090596d49862fe87a5c15aaa"  # "Added data and updated Readme"
FILE = "data/locomo10.zip"
SHA256 = "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5"
SIZE = 626_797


def _base() -> str:
    return os.environ.get("LOCOMO_BASE_URL", "https://raw.githubusercontent.com").rstrip("/")


def locomo_url(base: str | None = None) -> str:
    return f"{base or _base()}/{REPO}/{COMMIT}/{FILE}"


def _by_hand() -> str:
    return (
        f"download it by hand from https://github.com/{REPO}/blob/{COMMIT}/{FILE} and pass it"
        " with --dataset"
    )


def download_locomo(to: Path) -> Downloaded:
    """Fetch `locomo10.zip` into `to` (resuming a partial `.part`) and verify its sha256."""
    path = to / Path(FILE).name
    fetch_pinned(locomo_url(), path, SHA256, SIZE, _by_hand())
    return Downloaded(path, SHA256, "lme-bench")
