"""The text table writer (formats.shared.textcolumns, polars for big tables) against Python's formatting.

Both must write the same bytes: fixed-point numbers correctly rounded with ties to even,
negative zero, numbers that round to zero, huge numbers, whole nanosecond stamps beyond
2**53 and pre-formatted text; a Fixed chunk with NaN or infinity goes the Python way, and
shortest round-trip text equals ``repr`` everywhere.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import require_peer, use_polars
from motionkit.formats.shared import textcolumns as common

require_peer("polars")

HARD = [0.0, -0.0, -1e-12, -5e-10, 4.9999999999e-10, 2.675, 1.0000000005, 123.4999999995,
        1e22, -1e22, 0.1 + 0.2, 1 / 1024, 3 / 1024, -5 / 1024, 1 / 16, 2.5, -0.5]


def _text(columns: list[tuple[object, common.Formatter | None]], rows: int, delimiter: str,
          monkeypatch: pytest.MonkeyPatch, fast: bool) -> str:
    use_polars(monkeypatch, fast)
    out = io.StringIO()
    common.write_rows(out, columns, delimiter, rows)
    return out.getvalue()


def _both(columns: list[tuple[object, common.Formatter | None]], rows: int, delimiter: str,
          monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    return (_text(columns, rows, delimiter, monkeypatch, True),
            _text(columns, rows, delimiter, monkeypatch, False))


@pytest.mark.parametrize("precision", [0, 1, 3, 6, 9, 12])
def test_hard_numbers_are_written_alike(monkeypatch: pytest.MonkeyPatch, precision: int) -> None:
    values = np.array(HARD + [(2 * k + 1) / 2 ** (precision + 1) for k in range(-50, 50)])
    number = common.Fixed(precision)
    fast, slow = _both([(values, number), (-values, number)], values.size, " ", monkeypatch)
    assert fast == slow
    assert fast.count("\n") == values.size


def test_stamps_text_and_non_finite_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    ns = np.array([1403715524917144041, -5, 0, 2**62, -1_500_000_000, -(2**63)],
                  dtype=np.int64)
    numbers = np.array([1.5, np.nan, -np.inf, 2.0, 0.25, 1.0])
    columns: list[tuple[object, common.Formatter | None]] = [
        (ns, common.ns_seconds), (list("abcdef"), None), (ns, common.integers),
        (numbers, common.Fixed(3))]
    fast, slow = _both(columns, 6, ",", monkeypatch)
    assert fast == slow
    lines = slow.splitlines()
    assert lines[0] == "1403715524.917144041,a,1403715524917144041,1.500"
    assert lines[1].startswith("-0.000000005,b,-5,") and lines[4].startswith("-1.500000000,")
    assert lines[5].startswith("-9223372036.854775808,")
    assert "nan" in fast and "-inf" in fast  # Python's spelling (polars would write NaN)
    for rows in (5, 6):  # through polars (the int64 minimum, row 6, the Python way)
        finite = [(ns[:rows], common.ns_seconds), (numbers[[0, 3, 4, 0, 3, 4]][:rows],
                                                   common.Fixed(3))]
        fast, slow = _both(finite, rows, " ", monkeypatch)
        assert fast == slow
        assert fast.splitlines()[1] == "-0.000000005 2.000"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                       max_size=40),
       precision=st.integers(0, 15), delimiter=st.sampled_from([" ", ",", "\t"]))
def test_any_finite_numbers_are_written_alike(monkeypatch: pytest.MonkeyPatch,
                                              values: list[float], precision: int,
                                              delimiter: str) -> None:
    array = np.array(values)
    fast, slow = _both([(array, common.Fixed(precision))], array.size, delimiter, monkeypatch)
    assert fast == slow


def test_chunks_and_mixed_formatters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "_ROWS_PER_CHUNK", 7)
    values = np.random.default_rng(2).normal(size=50) * 1e3
    for number in (common.Fixed(9), common.shortest):
        fast, slow = _both([(values, number), (values * 2, common.shortest)], 50, ",",
                           monkeypatch)
        assert fast == slow
        assert float(fast.split(",", 1)[0]) == pytest.approx(values[0])


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.floats(width=64), min_size=1, max_size=40),
       scale=st.sampled_from([1.0, 1e-5, 1e-4, 1e15, 1e16, 1e300, 5e-324]))
def test_shortest_text_equals_repr(monkeypatch: pytest.MonkeyPatch, values: list[float],
                                   scale: float) -> None:
    with np.errstate(over="ignore"):  # inf is a case too
        array = np.array(values) * scale  # around repr's switches to and from exponents
    fast, slow = _both([(array, common.shortest)], array.size, ",", monkeypatch)
    assert fast == slow
    assert slow.splitlines() == [repr(v) for v in array.tolist()]
