"""The automations of deployments/automations.yaml on the Prefect server PREFECT_API_URL names,
and the notification block they send through.

    .venv/bin/python deployments/automation.py            # make deploy's last step
    LME_BENCH_NOTIFY_URL=https://… .venv/bin/python deployments/automation.py block slack

The first creates each automation of the file, or updates the one of its name in place (any
further ones of that name are deleted), so running it again leaves one. A notification action
names its block (`block_document_id: lme-bench-notify`); its id is looked up here. When that
block does not exist yet, the automation is left out, the way to create the block is printed,
and the exit status is still 0: deploying goes on without notifications.

`block slack|teams|url` saves the block: a Slack webhook, a Microsoft Teams (Workflows) webhook
or a custom webhook POSTing JSON ({"subject", "body", "text"}) to any URL, the URL read from
LME_BENCH_NOTIFY_URL and kept by the server as a secret value; it replaces any notification
block of that name.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import yaml
from prefect.blocks.core import Block
from prefect.blocks.notifications import (
    CustomWebhookNotificationBlock,
    MicrosoftTeamsWebhook,
    SlackWebhook,
)
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.objects import BlockDocument
from prefect.events.schemas.automations import AutomationCore
from prefect.types import SecretDict
from pydantic import SecretStr, ValidationError

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE / "automations.yaml"
BLOCK_NAME = "lme-bench-notify"
URL_ENV = "LME_BENCH_NOTIFY_URL"
KINDS = ("slack", "teams", "url")
ACTION_LISTS = ("actions", "actions_on_trigger", "actions_on_resolve")
BLOCK_ACTIONS = ("send-notification", "call-webhook")


class BadInput(Exception):
    """A file, setting or block that cannot be used as it is; exit status 2."""


def read_automations(path: Path) -> list[dict[str, Any]]:
    """The file's automations: a mapping with `automations`, a list, or one automation."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BadInput(f"{path}: cannot be read as YAML: {exc}") from None
    found = data.get("automations") if isinstance(data, dict) and "automations" in data else data
    found = found if isinstance(found, list) else [found]
    for index, automation in enumerate(found):
        if not isinstance(automation, dict) or not automation.get("name"):
            raise BadInput(f"{path}: automation {index + 1} is not a mapping with a name")
    return found


def notification_blocks(client: SyncPrefectClient, name: str) -> list[BlockDocument]:
    """The blocks of that name that can notify, whatever their type."""
    response = client.request(
        "POST",
        "/block_documents/filter",
        json={
            "block_documents": {"name": {"any_": [name]}, "is_anonymous": {"eq_": False}},
            "block_schemas": {"block_capabilities": {"all_": ["notify"]}},
            "include_secrets": False,
        },
    )
    response.raise_for_status()
    return BlockDocument.model_validate_list(response.json())


def block_id(client: SyncPrefectClient, name: str, where: str) -> UUID | None:
    found = notification_blocks(client, name)
    if len(found) > 1:
        types = ", ".join(sorted(b.block_type.slug for b in found if b.block_type))
        raise BadInput(f"{where}: {len(found)} notification blocks are named {name!r} ({types})")
    return found[0].id if found else None


def resolved(client: SyncPrefectClient, data: dict[str, Any], path: Path) -> tuple[Any, list[str]]:
    """The automation with its blocks' names replaced by their ids, and the names not found."""
    data = dict(data)
    missing: list[str] = []
    for key in ACTION_LISTS:
        actions = []
        for index, action in enumerate(data.get(key) or []):
            if not isinstance(action, dict):  # left to the validation, which names it
                actions.append(action)
                continue
            action = dict(action)
            reference = str(action.get("block_document_id", ""))
            if action.get("type") in BLOCK_ACTIONS and reference and not _is_uuid(reference):
                where = f"{path}: {data['name']!r} {key}[{index}]"
                found = block_id(client, reference, where)
                if found is None:
                    missing.append(reference)
                action["block_document_id"] = str(found)
            actions.append(action)
        if key in data:
            data[key] = actions
    return data, missing


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def apply(client: SyncPrefectClient, automation: AutomationCore) -> str:
    """Create the automation, or update the one of its name; further ones of it go."""
    existing = client.read_automations_by_name(automation.name)
    if not existing:
        return f"created ({client.create_automation(automation)})"
    keep, *extra = existing
    client.update_automation(keep.id, automation)
    for duplicate in extra:
        client.delete_automation(duplicate.id)
    gone = f"; {len(extra)} more of that name deleted" if extra else ""
    return f"updated ({keep.id}){gone}"


def create_hint(name: str) -> str:
    return (
        f"no notification block {name!r} on this server, so no message is sent when a run"
        f" fails. Create it (the URL from the environment), then run `make deploy` again:\n"
        f"  {URL_ENV}=https://hooks.slack.com/services/… "
        f".venv/bin/python deployments/automation.py block slack   # or teams, or url\n"
        f"(docs/prefect.md, Notifications)"
    )


def apply_file(path: Path) -> int:
    automations = read_automations(path)
    with get_client(sync_client=True) as client:
        for data in automations:
            data, missing = resolved(client, data, path)
            if missing:
                for name in sorted(set(missing)):
                    print(f"automation {data['name']!r} left out: {create_hint(name)}")
                continue
            try:
                automation = AutomationCore.model_validate(data)
            except ValidationError as exc:
                raise BadInput(f"{path}: automation {data['name']!r}: {exc}") from None
            print(f"automation {automation.name!r}: {apply(client, automation)}")
    return 0


def notification_block(kind: str, url: str, name: str) -> Block:
    if kind == "slack":
        return SlackWebhook(url=SecretStr(url))
    if kind == "teams":
        return MicrosoftTeamsWebhook(url=SecretStr(url))
    return CustomWebhookNotificationBlock(
        name=name,
        url="{{url}}",  # filled from the secret values when a message is sent
        secrets=SecretDict({"url": url}),
        headers=None,
        cookies=None,
        json_data={"subject": "{{subject}}", "body": "{{body}}", "text": "{{subject}}\n{{body}}"},
    )


def save_block(kind: str, name: str) -> int:
    url = os.environ.get(URL_ENV, "").strip()
    if not url.startswith(("https://", "http://")):
        state = "is not set" if not url else "is not an http(s) URL"
        raise BadInput(f"{URL_ENV} {state}: it holds the webhook URL of the {kind} block")
    try:
        block = notification_block(kind, url, name)
    except Exception as exc:  # the block's own check of its URL; its text may hold the URL
        raise BadInput(f"{URL_ENV} is not a {kind} webhook URL ({type(exc).__name__})") from None
    with get_client(sync_client=True) as client:
        for other in notification_blocks(client, name):
            if other.block_type and other.block_type.slug != block.get_block_type_slug():
                client.delete_block_document(other.id)
    block.save(name, overwrite=True)
    print(f"notification block {name!r} saved ({block.get_block_type_slug()}, URL from {URL_ENV})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the automations file")
    block = commands.add_parser("block", help=f"save the block; its URL from {URL_ENV}")
    block.add_argument("kind", choices=KINDS)
    block.add_argument("--name", default=BLOCK_NAME, help="the block's name")
    args = parser.parse_args(argv)
    try:
        if args.command == "block":
            return save_block(args.kind, args.name)
        return apply_file(args.file)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except httpx.HTTPError as exc:
        where = os.environ.get("PREFECT_API_URL", "the Prefect API")
        print(f"error: {where}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
