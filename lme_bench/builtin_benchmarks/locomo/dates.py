"""LoCoMo session date-times, written like `1:56 pm on 8 May, 2023`.

Accepted with some slack, since hand-edited copies vary: any case, `am`/`a.m.`, optional comma
after the month, full or three-letter month names, extra spaces.
"""

from __future__ import annotations

import re
from datetime import datetime

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}

_DATE_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?\s*,?\s*(\d{4})\s*$",
    re.IGNORECASE,
)


def parse_session_date(text: str) -> datetime:
    """The moment a session took place; ValueError naming the text when it is not a date."""
    match = _DATE_TIME.match(text)
    if match is None:
        raise ValueError(f"unparsable date {text!r} (expected like '1:56 pm on 8 May, 2023')")
    hour_text, minute_text, half, day_text, month_text, year_text = match.groups()
    month = _MONTHS.get(month_text.lower())
    if month is None:
        raise ValueError(f"unparsable date {text!r}: unknown month {month_text!r}")
    hour = int(hour_text)
    if not 1 <= hour <= 12:
        raise ValueError(f"unparsable date {text!r}: hour {hour} is not on a 12-hour clock")
    hour = hour % 12 + (12 if half.lower() == "p" else 0)
    try:
        return datetime(int(year_text), month, int(day_text), hour, int(minute_text))
    except ValueError as exc:
        raise ValueError(f"unparsable date {text!r}: {exc}") from None
