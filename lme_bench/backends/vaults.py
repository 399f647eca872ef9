"""Vault titles of the Mycelian-shaped backends (`embedded`, `mcp`): the vault their memories
are kept in is theirs to choose, never the stages'."""

from __future__ import annotations

import re
import socket


def vault_title(vault: str | None) -> str:
    """`vault`, or one vault per host (Mycelian titles: ≤ 50 chars, lowercase letters, digits
    and hyphens)."""
    if vault:
        return vault
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-") or "host"
    return f"lme-bench-{host}"[:50].rstrip("-")
