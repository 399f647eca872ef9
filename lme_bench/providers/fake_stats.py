"""Process-wide count of fake model calls in flight, so tests and benchmarks can check limits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class InFlightRecorder:
    """Thread-safe: calls now in flight, the most ever in flight at once, and calls started."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.total = 0

    @contextmanager
    def track(self) -> Iterator[None]:
        with self._lock:
            self.in_flight += 1
            self.total += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    def reset(self) -> None:
        """Zero the peak and the total (calls still in flight stay counted)."""
        with self._lock:
            self.max_in_flight = self.in_flight
            self.total = 0


FAKE_CALLS = InFlightRecorder()
