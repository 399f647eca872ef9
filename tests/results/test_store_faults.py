"""An object store that stops answering, on a real S3 server (SeaweedFS on loopback) killed by
the test: each call is tried again with doubling waits, then fails as one StoreUnavailable
naming the object's URL and no credential; a server back during the waits lets the call
succeed; a missing object is not retried."""

from __future__ import annotations

import pytest

from lme_bench.results.store import RunStore, StoreUnavailable
from lme_bench.results.store_retry import StoreRetry
from tests.s3_server import ACCESS_KEY, SECRET_KEY, KillableServer, killable_s3_server

pytestmark = pytest.mark.slow
__all__ = ["killable_s3_server"]


class Waits:
    """The waits asked for, and what to do at one of them (the test's fault point)."""

    def __init__(self, at_first: object = None) -> None:
        self.asked: list[float] = []
        self.at_first = at_first

    def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        if len(self.asked) == 1 and callable(self.at_first):
            self.at_first()


def _store(bucket: str, waits: Waits, attempts: int = 3) -> RunStore:
    # a killed server refuses at once; the long timeout only keeps a busy machine from failing
    # a call to a live one
    retry = StoreRetry(attempts, first_wait_s=0.5, max_wait_s=1.0, timeout_s=60, sleep=waits)
    return RunStore(f"s3://{bucket}/runs", retry)


def test_a_store_that_is_down_fails_each_call_once_its_retries_are_spent(
    killable_s3_server: KillableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = killable_s3_server.new_bucket(monkeypatch)
    waits = Waits()
    store = _store(bucket, waits)
    store.put_bytes("r1/kept.json", b"{}")
    killable_s3_server.kill()
    calls = {
        "write": lambda: store.put_bytes("r1/new.json", b"{}"),
        "read": lambda: store.read_bytes("r1/kept.json"),
        "read ": lambda: store.exists("r1/kept.json"),  # not False: the store did not say
        "list": lambda: store.names("r1"),
    }
    for verb, call in calls.items():
        waits.asked.clear()
        with pytest.raises(StoreUnavailable) as failed:
            call()
        message = str(failed.value)
        assert message.startswith(f"cannot {verb.strip()} s3://{bucket}/runs/r1"), message
        assert "did not answer (3 attempts" in message
        assert SECRET_KEY not in message and ACCESS_KEY not in message
        assert waits.asked == [0.5, 1.0]  # doubling, at most max_wait_s
    killable_s3_server.restart()


def test_a_store_back_during_the_waits_takes_the_write(
    killable_s3_server: KillableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = killable_s3_server.new_bucket(monkeypatch)
    waits = Waits(at_first=killable_s3_server.restart)  # back before the second attempt
    store = _store(bucket, waits)
    store.put_bytes("r1/before.json", b"1")
    killable_s3_server.kill()
    store.put_bytes("r1/after.json", b"2")
    assert len(waits.asked) == 1
    assert store.read_bytes("r1/after.json") == b"2"
    assert store.read_bytes("r1/before.json") == b"1"  # the same data folder


def test_a_missing_object_is_not_retried(
    killable_s3_server: KillableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = killable_s3_server.new_bucket(monkeypatch)
    waits = Waits()
    store = _store(bucket, waits)
    with pytest.raises(FileNotFoundError, match=f"s3://{bucket}/runs/nothing.json"):
        store.read_bytes("nothing.json")
    assert not store.exists("nothing.json")
    assert waits.asked == []
