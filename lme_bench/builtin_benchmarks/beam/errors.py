"""One error for bad BEAM input, naming the file, the chat, the question and the field."""

from __future__ import annotations

from pathlib import Path

from lme_bench.dataset.errors import DatasetError


class BeamFormatError(DatasetError):
    """Bad BEAM input: `file: chat C: question Q: field F: problem` (the parts known)."""

    def __init__(
        self,
        path: Path | str,
        problem: str,
        *,
        chat: str | None = None,
        question: str | None = None,
        field: str | None = None,
    ) -> None:
        place = [str(path)]
        if chat:
            place.append(f"chat {chat}")
        if question:
            place.append(f"question {question}")  # the ability and its index in the file
        if field:
            place.append(f"field {field}")
        ValueError.__init__(self, f"{': '.join(place)}: {problem}")
        self.path = str(path)
        self.chat = chat
        self.question = question
        self.field = field
        self.problem = problem
        self.index = None
        self.question_id = None  # BEAM questions have no id of their own in the file
