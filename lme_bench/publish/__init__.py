"""Publishing a run: one archive of its files with their digests (`bundle`), signed with
Ed25519 when a key is given, and the checks anyone can run on it (`verify`)."""

from lme_bench.publish.errors import PublishError

__all__ = ["PublishError"]
