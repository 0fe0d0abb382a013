"""The shared limits: the budget, and the nesting scan no arrangement of text can fool."""

from __future__ import annotations

import random

import pytest

from motionkit import _limits
from motionkit._limits import Budget, bracket_depth, parse_int
from motionkit.errors import FormatError


def _reference_depth(text: bytes) -> int:
    depth = deepest = 0
    for byte in text:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth = max(depth - 1, 0)
    return deepest


@pytest.mark.parametrize("chunk", [3, 7, 1 << 22])
def test_bracket_depth_matches_a_plain_count_across_chunks(
        chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "_CHUNK", chunk)
    rng = random.Random(7)
    for _ in range(300):
        text = bytes(rng.choice(b"[]{}x \"#") for _ in range(rng.randrange(60)))
        assert bracket_depth(text) == _reference_depth(text), text


def test_closing_brackets_cannot_hide_depth() -> None:
    hidden = b"# " + b"]" * 5000 + b"\nx: " + b"[" * 5000 + b"]" * 5000
    assert bracket_depth(hidden) == 5000


def test_budget_names_itself_and_the_file() -> None:
    budget = Budget("test work", "f.seq", 10, per_byte=2, floor=5)
    budget.charge(25)
    assert budget.allows(0) and not budget.allows(1)
    with pytest.raises(FormatError, match=r"^f\.seq:3: exceeds the test work budget \(25 units"):
        budget.charge(1, 3)


@pytest.mark.parametrize("text,value", [("17", 17), (" -3 ", -3), ("+0", 0),
                                        ("9" * 18, int("9" * 18)), ("9" * 19, None),
                                        ("1_000", None), ("", None), ("٣", None), ("-", None)])
def test_parse_int(text: str, value: int | None) -> None:
    assert parse_int(text) == value
