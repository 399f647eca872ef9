"""Ed25519 keys and signatures over a bundle's manifest (BUNDLE.json)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from lme_bench.publish.errors import PublishError

ALGORITHM = "ed25519"


def fingerprint(public: Ed25519PublicKey) -> str:
    """sha256 of the raw 32-byte public key, hex."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def write_key(path: Path) -> str:
    """A new private key at `path` (PEM, PKCS#8, readable by its owner only); its
    fingerprint."""
    if path.exists():
        raise PublishError(f"{path}: exists; a key is never overwritten")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem)
    return fingerprint(key.public_key())


def read_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise PublishError(f"{path}: not a PEM private key without a passphrase ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise PublishError(f"{path}: not an Ed25519 key (lme-bench bundle keygen makes one)")
    return key


def sign(manifest: bytes, key: Ed25519PrivateKey) -> bytes:
    """BUNDLE.sig: the signature of `manifest`'s bytes, the public key and its fingerprint."""
    public = key.public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    record = {
        "algorithm": ALGORITHM,
        "signed": "BUNDLE.json",
        "public_key": base64.b64encode(raw).decode(),
        "fingerprint": fingerprint(public),
        "signature": base64.b64encode(key.sign(manifest)).decode(),
    }
    return (json.dumps(record, indent=2) + "\n").encode()


def check_signature(manifest: bytes, signature: bytes) -> tuple[str | None, str]:
    """(the signer's fingerprint, "") when BUNDLE.sig signs `manifest`, else (None, why)."""
    try:
        record: dict[str, Any] = json.loads(signature)
        raw = base64.b64decode(record["public_key"], validate=True)
        public = Ed25519PublicKey.from_public_bytes(raw)
        signed = base64.b64decode(record["signature"], validate=True)
    except (ValueError, KeyError, TypeError) as exc:
        return None, f"BUNDLE.sig cannot be read ({exc})"
    if record.get("algorithm") != ALGORITHM:
        return None, f"BUNDLE.sig: unknown algorithm {record.get('algorithm')!r}"
    if record.get("fingerprint") != fingerprint(public):
        return None, "BUNDLE.sig: its fingerprint is not its public key's"
    try:
        public.verify(signed, manifest)
    except InvalidSignature:
        return None, "BUNDLE.sig: bad signature (BUNDLE.json is not what the key signed)"
    return fingerprint(public), ""
