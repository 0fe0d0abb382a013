"""The compiled number scan (``formats/shared/_number_scan.c``) against the rule it is held
to (``number_scan.scan_reference``: each plain decimal token is ``float(token)``): the same
count, the same stop and the same bits, on corpus number blocks and generated text."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import corpus_root, require_compiled
from motionkit.formats.shared import number_scan


def test_the_install_compiled_the_scan() -> None:
    # setup.py builds it (optional, for machines without a compiler)
    require_compiled(number_scan.COMPILED, "the compiled number scan")


def _agree(raw: bytes, start: int = 0, room: int | None = None) -> number_scan.Scan:
    room = len(raw) // 2 + 1 if room is None else room
    fast, slow = np.full(room, -7.0), np.full(room, -7.0)
    compiled = number_scan.scan(raw, start, fast)
    if compiled is None:  # not built: the install test above fails, these have nothing to hold
        pytest.skip("the compiled number scan was not built")
    reference = number_scan.scan_reference(raw, start, slow)
    assert compiled == reference, raw[:200]
    assert fast.tobytes() == slow.tobytes(), raw[:200]  # bit for bit, NaN and -0.0 included
    return compiled


def _bits(value: float) -> str:
    return struct.pack("<d", value).hex()


@pytest.mark.parametrize("text", [
    "0", "-0", "+0", "-0.0", "0.", ".5", "-.5", "5.", "1e5", "1E+05", "1e-5", "1.e5",
    "123456789012345678", "1234567890123456789", "12345678901234567890", "9007199254740993",
    "9007199254740992", "0.1", "0.3", "2.2250738585072011e-308", "4.9406564584124654e-324",
    "2e-324", "1e-400", "1e400", "-1e400", "1.7976931348623157e308", "1.7976931348623159e308",
    "0." + "0" * 30 + "1", "1" + "0" * 30, "1" * 400 + ".5", "3.14159265358979323846264338",
    "1e22", "1e23", "9e22", "123e-22", "123e-23", "7.0e+00", "00000000000000000000000001.5",
    "1e0000000000000000000000000000005", "1e-99999999999999999999", "0e999999",
    # an exponent past the gathered digits must not cancel a long shift (inf and 0, not 1)
    "0." + "0" * 99999 + "1e1000000", "1" + "0" * 99999 + "e-1000000",
    "0." + "0" * 99999 + "1e100000", "1" + "0" * 100000 + "e-99999999999",
])
def test_plain_numbers_are_float_bit_for_bit(text: str) -> None:
    found = _agree(f" {text}\n".encode())
    assert found == number_scan.Scan(1, -1)
    out = np.empty(1)
    number_scan.scan(text.encode(), 0, out)
    assert _bits(out[0]) == _bits(float(text))


@pytest.mark.parametrize("text", ["nan", "-inf", "Infinity", "1_0", "x", "1e", "1e+", "-", "+",
                                  ".", "1.2.3", "--1", "1-", "e5", "\x1c1", "1\x00", "١", "0x10",
                                  "1,5", "1.5f", "½"])
def test_other_tokens_stop_the_scan_where_they_start(text: str) -> None:
    raw = f"1 2.5\t-3\n {text} 4".encode()
    found = _agree(raw)
    assert found == number_scan.Scan(3, raw.index(b"\n ") + 2)


def test_room_bounds_what_is_stored_not_what_is_counted() -> None:
    raw = b"1 2 3 4 5 6"
    out = np.full(4, -1.0)
    assert _agree(raw, room=2) == number_scan.Scan(6, -1)
    assert number_scan.scan(raw, 0, out[:2]) == number_scan.Scan(6, -1)
    assert out.tolist() == [1.0, 2.0, -1.0, -1.0]
    assert _agree(raw, start=3, room=0) == number_scan.Scan(4, -1)
    assert _agree(b"") == _agree(b" \r\n\t\v\f ") == number_scan.Scan(0, -1)


def test_bad_arguments_are_refused() -> None:
    compiled = number_scan._COMPILED
    if compiled is None:
        pytest.skip("the compiled number scan was not built")
    with pytest.raises(ValueError, match="start"):
        compiled.scan(b"1 2", 4, np.empty(2))
    with pytest.raises(ValueError, match="float64"):
        compiled.scan(b"1 2", 0, np.empty(2, dtype=np.float32))
    with pytest.raises((ValueError, BufferError)):
        compiled.scan(b"1 2", 0, np.empty((2, 2))[:, 0])  # not contiguous
    frozen = np.zeros(2)
    frozen.setflags(write=False)
    with pytest.raises((ValueError, BufferError)):
        compiled.scan(b"1 2", 0, frozen)
    with pytest.raises(TypeError):
        compiled.scan(bytearray(b"1 2"), 0, np.empty(2))  # bytes only: their data ends in NUL


def test_corpus_number_blocks() -> None:
    files = sorted(p for p in corpus_root().rglob("*") if p.suffix.lower() in
                   (".bvh", ".tum", ".txt", ".csv", ".traj")) if corpus_root().is_dir() else []
    if not files:
        pytest.skip("no corpus")
    for path in files:
        raw = path.read_bytes()
        start = raw.find(b"Frame Time")
        _agree(raw, 0 if start < 0 else raw.index(b"\n", start))


def _token() -> st.SearchStrategy[str]:
    finite = st.floats(allow_nan=False, allow_infinity=False)
    return st.one_of(
        finite.map(repr),
        st.tuples(finite, st.integers(0, 20)).map(lambda p: f"{p[0]:.{p[1]}f}"[:60]),
        st.tuples(finite, st.integers(0, 25)).map(lambda p: f"{p[0]:.{p[1]}e}"),
        st.tuples(finite, st.integers(0, 17)).map(lambda p: f"{p[0]:.{p[1]}E}"),
        st.integers(-(10 ** 40), 10 ** 40).map(str),
        st.tuples(st.text("0123456789", max_size=30), st.text("0123456789", max_size=30),
                  st.sampled_from(["", "e", "E-", "e+"]), st.integers(0, 400),
                  st.sampled_from(["", "-", "+"])).map(
            lambda p: f"{p[4]}{p[0]}.{p[1]}{p[2] + str(p[3]) if p[2] else ''}"),
        st.sampled_from(["nan", "-inf", "1_0", "x", "1e", "-", ".", "1.2.3", "\x1c", "é", "0x1"]),
        _long_zeros(),
    )


def _long_zeros() -> st.SearchStrategy[str]:
    """A long run of zeros before (fraction) or after (integer) a few digits, with an
    exponent near or past the run's length: the shift and the exponent nearly cancel."""
    return st.tuples(st.integers(99_990, 100_010), st.text("123456789", min_size=1, max_size=3),
                     st.booleans(), st.integers(-30, 30), st.sampled_from([1, 10, 10**6])).map(
        lambda p: (f"0.{'0' * p[0]}{p[1]}e{p[0] * p[4] + p[3]}" if p[2]
                   else f"{p[1]}{'0' * p[0]}e-{p[0] * p[4] + p[3]}"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_token(), st.sampled_from([" ", "\t", "\n", "\r\n", "  ", "\v", "\f",
                                                       " \n\t"])), max_size=60),
       st.integers(0, 3))
def test_generated_number_text(parts: list[tuple[str, str]], lead: int) -> None:
    raw = ("\n" * lead + "".join(token + blank for token, blank in parts)).encode()
    _agree(raw)
    _agree(raw, room=len(parts) // 2)
