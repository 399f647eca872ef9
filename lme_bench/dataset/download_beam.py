"""Download BEAM's chats from its GitHub repository, pinned by commit and per-file sha256.

`lme-bench dataset download beam-100k|beam-500k [--to DIR]` fetches every chat of the tier
(`chats/<tier>/<n>/chat.json`, `chats/<tier>/<n>/chat_trunecated.json` where the repository has
it, and `chats/<tier>/<n>/probing_questions/probing_questions.json`) from
mohammadtavakoli78/BEAM at COMMIT into the same layout under DIR, which a run reads
(`--dataset DIR/chats/100K`). A chat's `chat_trunecated.json` (sic) is the history BEAM's own
question and answer generation read where it exists, and what a run ingests then. The tiers'
files are plain files in the repository (no LFS). The 1M and 10M tiers are not offered: many
of their chat.json files are too large for the snapshot lme-bench pinned the sha256s from.
BEAM's data is fetched on the user's request and never shipped with lme-bench. Each file's
bytes go to `<name>.part` (a later run continues it with a Range request) and are checked
against the sha256 lme-bench pins (lme_bench.dataset.beam_files) before the file takes its
name; bytes that do not match are moved to `<name>.bad`. A file already there with its pinned
sha256 is not fetched again. `BEAM_BASE_URL` replaces `https://raw.githubusercontent.com` (a
mirror).
"""

from __future__ import annotations

import os
from pathlib import Path

from lme_bench.dataset.beam_files import PINNED_FILES
from lme_bench.dataset.download import Downloaded, DownloadError
from lme_bench.dataset.pinned_download import fetch_pinned
from lme_bench.dataset.shards import folder_sha256

REPO = "mohammadtavakoli78/BEAM"
COMMIT = "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"  # the chats are as "Added codes" added them
TIERS = {"beam-100k": "100K", "beam-500k": "500K"}


def _base() -> str:
    return os.environ.get("BEAM_BASE_URL", "https://raw.githubusercontent.com").rstrip("/")


def beam_url(path: str, base: str | None = None) -> str:
    return f"{base or _base()}/{REPO}/{COMMIT}/{path}"


def tier_files(variant: str) -> list[str]:
    """The repository paths of the tier's files, in chat order."""
    if variant not in TIERS:
        raise DownloadError(f"unknown BEAM tier {variant!r}: choose one of {', '.join(TIERS)}")
    prefix = f"chats/{TIERS[variant]}/"
    return [path for path in PINNED_FILES if path.startswith(prefix)]


def _by_hand(path: str) -> str:
    return (
        f"download it by hand from https://github.com/{REPO}/blob/{COMMIT}/{path} into the"
        " same path under --to"
    )


def download_beam(variant: str, to: Path) -> Downloaded:
    """Fetch the tier's chats into `to` (each file resumed, verified, then renamed); the tier
    folder a run reads and its content digest."""
    paths = tier_files(variant)
    for path in paths:
        expected, size = PINNED_FILES[path]
        fetch_pinned(beam_url(path), to / path, expected, size, _by_hand(path), path)
    folder = to / "chats" / TIERS[variant]
    return Downloaded(folder, folder_sha256(folder), "lme-bench")
