"""The one error of publishing: what cannot be bundled, or a bundle that cannot be read."""

from __future__ import annotations


class PublishError(ValueError):
    """A run that cannot be bundled (unfinished, or holding a secret, a path or the host
    name), or a key or archive that cannot be read; the message names the file."""
