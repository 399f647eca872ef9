from __future__ import annotations

from datetime import datetime

import pytest

from lme_bench.builtin_benchmarks.locomo.dates import parse_session_date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
        ("12:09 am on 2 January, 2024", datetime(2024, 1, 2, 0, 9)),
        ("12:30 pm on 31 December, 2022", datetime(2022, 12, 31, 12, 30)),
        ("  9:05 PM on 3 Aug 2023 ", datetime(2023, 8, 3, 21, 5)),
        ("7:00 a.m. on 1 sept, 2023", datetime(2023, 9, 1, 7, 0)),
        ("11:59 pm  on  29 February,2024", datetime(2024, 2, 29, 23, 59)),
    ],
)
def test_parses_locomo_session_dates(text: str, expected: datetime) -> None:
    assert parse_session_date(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2023/05/08 (Mon) 13:56", "expected like"),
        ("1:56 on 8 May, 2023", "expected like"),
        ("1:56 pm on 8 Mayday, 2023", "unknown month"),
        ("13:56 pm on 8 May, 2023", "12-hour clock"),
        ("0:56 am on 8 May, 2023", "12-hour clock"),
        ("1:56 pm on 31 April, 2023", "day is out of range"),
        ("1:61 pm on 8 May, 2023", "minute must be"),
        ("", "expected like"),
    ],
)
def test_refuses_what_is_not_a_session_date_naming_the_text(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        parse_session_date(text)
    assert repr(text) in str(caught.value)
