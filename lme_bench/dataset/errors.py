"""Errors about input data that name the place where the problem is."""

from __future__ import annotations

from pathlib import Path


class DatasetError(ValueError):
    """Bad dataset input: names the file, the question (index and id) and the field."""

    def __init__(
        self,
        path: Path | str,
        problem: str,
        *,
        index: int | None = None,
        question_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.index = index
        self.question_id = question_id
        self.field = field
        self.problem = problem
        place = [self.path]
        if index is not None:
            who = f"question #{index}"
            if question_id:
                who += f" (question_id {question_id!r})"
            place.append(who)
        if field:
            place.append(f"field {field}")
        super().__init__(f"{': '.join(place)}: {problem}")
