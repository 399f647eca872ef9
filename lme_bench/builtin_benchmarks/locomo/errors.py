"""The one error bad LoCoMo input raises: it names the file, the sample and the field."""

from __future__ import annotations

from pathlib import Path


class LocomoDataError(ValueError):
    """Bad LoCoMo input at one place: file, sample id (when known) and field (when known)."""

    def __init__(
        self,
        path: Path | str,
        problem: str,
        *,
        sample_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.sample_id = sample_id
        self.field = field
        self.problem = problem
        place = [self.path]
        if sample_id is not None:
            place.append(f"sample {sample_id!r}")
        if field:
            place.append(f"field {field}")
        super().__init__(f"{': '.join(place)}: {problem}")
