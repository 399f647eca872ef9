"""How to reach an MCP server: the connection settings of the `mcp` backend's `[memory.params]`
(and of the servers the `mcp-tools` backend starts)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class McpSettings(BaseModel):
    """How to reach an MCP memory server (Mycelian's tool surface)."""

    model_config = ConfigDict(extra="forbid")

    transport: Literal["streamable_http", "stdio"] = Field(
        default="streamable_http",
        description="streamable_http: a server at url; stdio: lme-bench starts command",
    )
    url: str | None = Field(default=None, description="streamable HTTP endpoint, e.g. …/mcp")
    command: str | None = Field(default=None, description="stdio: the server command")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: extra environment")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers (no secrets)")
    headers_from_env: dict[str, str] = Field(
        default_factory=dict,
        description="HTTP header -> environment variable holding its value (for tokens), or"
        " 'PREFIX VARIABLE', e.g. 'Bearer LME_MEMORY_TOKEN'",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="per tool call")
