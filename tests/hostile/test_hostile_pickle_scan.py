"""The pickle pre-scan is compiled; it must decide exactly as the Python walk that states
the rules (same offset, same message) on honest, mangled, crafted and generated pickles."""

from __future__ import annotations

import pickle
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import corpus_file, corpus_names, corpus_root, require_compiled
from motionkit.formats.shared.pickles import pickle_scan


def _outcome(scan: object, data: bytes, start: int, **options: object) -> str:
    try:
        return f"ok {scan(data, start, **options)}"  # type: ignore[operator]
    except pickle_scan.PickleProblem as exc:
        return f"refused {exc}"


def _agree(data: bytes, start: int = 0, **options: object) -> str:
    compiled = _outcome(pickle_scan.scan, data, start, **options)
    assert compiled == _outcome(pickle_scan.scan_reference, data, start, **options), data[:200]
    return compiled


def test_the_install_compiled_the_scan() -> None:
    # setup.py builds it (optional, for machines without a compiler)
    require_compiled(pickle_scan.COMPILED, "the compiled pickle scan")


def _honest() -> list[bytes]:
    return [pickle.dumps(value, protocol) for protocol in (0, 2, 4, 5) for value in (
        [float(i) for i in range(3000)], list(range(-5, 70_000, 7)), [None, True, False] * 900,
        {"a": [1.5] * 50, "b": ([], {}, ()), "c": {1, 2, 3}, "d": frozenset({4})},
        [[i, [i]] for i in range(500)], ["text", b"bytes", bytearray(b"ba"), 2**70, -(2**40)])]


def _mangled(rng: random.Random, honest: list[bytes]) -> list[bytes]:
    out = []
    for data in honest:
        for _ in range(30):
            mangled = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(mangled))
                if rng.random() < 0.5:
                    mangled[at] = rng.choice(b"NJKMG\x88\x89])}(e.0t2hqpg\x95\x94X\x8e")
                else:
                    del mangled[at:at + rng.randint(1, 12)]
            out.append(bytes(mangled))
    return out


def test_honest_and_mangled_pickles_are_decided_alike() -> None:
    honest = _honest()
    results = [_agree(data) for data in honest + _mangled(random.Random(3), honest)]
    assert all(result.startswith("ok") for result in results[:len(honest)])
    assert sum(result.startswith("refused") for result in results) > 100


P2 = b"\x80\x02"
CRAFTED: dict[str, tuple[bytes, str]] = {  # the pickle, what the scan says
    "more values than the stack holds": (P2 + b"N" * 100_010 + b".",
        "more than 100000 values"),
    "marks nested too deep": (P2 + b"(" * 1_001 + b"N.",
        "deeper than 1000 marks"),
    "values nested too deep": (P2 + b"N" + b"\x85" * 101 + b".",
        "deeper than 100 levels (at byte 103)"),
    "lists filled too deep": (P2 + b"]" + b"]" * 101 + b"a" * 101 + b".",
        "deeper than 100 levels (at byte 204)"),
    "too many set inserts": (P2 + b"\x8f(" + b"K\x01" * 10_001 + b"\x90.",
        "more than 10000 dictionary/set items"),
    "too many dict inserts": (P2 + b"}(" + b"K\x01K\x02" * 10_001 + b"u.",
        "more than 10000 dictionary/set items"),
    "re-used data": (P2 + b"C\xff" + bytes(255) + b"q\x00" + b"0h\x00" * 5_000 + b".",
        "re-uses large data"),
    "memo out of order": (P2 + b"Nq\x05.",
        "memo index 5 out of order at byte 3"),
    "memo not stored": (P2 + b"h\x03.",
        "memo index 3 not yet stored at byte 2"),
    "put on an empty stack": (P2 + b"q\x00N.",
        "BINPUT on an empty stack"),
    "text put with a sign": (b"Np-1\n.",
        "bad PUT index at byte 1"),
    "text put with a space": (b"Np 1\n.",
        "bad PUT index at byte 1"),
    "text put with ten digits": (b"Np1234567890\n.",
        "bad PUT index at byte 1"),
    "text put and get": (b"(Np0\ng0\nt.",
        "ok 10"),
    "text number overlong": (b"I" + b"1" * 4_301 + b"\n.",
        "overlong INT argument at byte 0"),
    "text global": (b"cbuiltins\nset\n.",
        "ok 15"),
    "negative BINSTRING": (P2 + b"T" + struct.pack("<i", -5) + b".",
        "declares -5 bytes but only 1 remain"),
    "huge BINBYTES8": (P2 + b"\x8e" + struct.pack("<Q", 2**63 + 5) + b".",
        "declares 9223372036854775813 bytes"),
    "FRAME too long": (P2 + b"\x95" + struct.pack("<Q", 100) + b"N.",
        "FRAME at byte 2 is longer"),
    "forbidden EXT1": (P2 + b"\x82\x01.",
        "forbidden pickle opcode EXT1 at byte 2"),
    "persistent id": (P2 + b"K\x01Q.",
        "BINPERSID"),
    "appends without a mark": (P2 + b"]Ne.",
        "APPENDS without MARK at byte 4"),
    "pop below the mark": (P2 + b"N(0.",
        "underflow at byte 4 (POP)"),
    "invalid opcode": (P2 + b"\xff.",
        "invalid pickle opcode 0xff at byte 2"),
    "truncated argument": (P2 + b"G\x00\x00",
        "truncated pickle at byte 2"),
    "no STOP": (P2 + b"NN",
        "truncated (no STOP)"),
    "dup of an empty stack": (P2 + b"2.",
        "underflow at byte 2 (DUP)"),
    "text arguments weigh their length": (
        P2 + b"V" + b"a" * 2_000_000 + b"\nq\x00" + b"0h\x00" * 3 + b".",
        "re-uses large data"),
    "empty sets beyond the container limit": (
        P2 + b"]" + (b"(" + b"\x8f" * 90_000 + b"e") * 5 + b".",
        "lists, dicts and sets take more than"),
    "dup and tuple": (P2 + b"]2\x86.",
        "ok 6"),
    "build and newobj": (P2 + b"}}b)\x81.",
        "ok 8"),
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_pickles_are_decided_alike(name: str) -> None:
    data, expected = CRAFTED[name]
    assert expected in _agree(data)
    _agree(data, allow_persistent=True)


def test_persistent_ids_only_where_allowed() -> None:
    data = CRAFTED["persistent id"][0]
    assert _agree(data).startswith("refused forbidden pickle opcode BINPERSID")
    assert _agree(data, allow_persistent=True).startswith("ok")


def test_a_pickle_inside_a_larger_buffer() -> None:
    inner = pickle.dumps({"x": [1.0, 2.0]}, 4)
    buffer = b"junk" + inner + b"more"
    assert _agree(buffer, 4, stop=4 + len(inner), origin=4) == f"ok {4 + len(inner)}"
    assert _agree(buffer, 4, stop=3 + len(inner), origin=4).startswith("refused")
    assert _agree(bytearray(buffer), 4) == f"ok {4 + len(inner)}"


@pytest.mark.parametrize("scan", [pickle_scan.scan, pickle_scan.scan_reference])
@pytest.mark.parametrize(("start", "stop"), [(0, 5), (-1, None), (2, 1)])
def test_scan_bounds_outside_the_data_are_a_caller_error(scan: object, start: int,
                                                          stop: int | None) -> None:
    with pytest.raises(ValueError, match="outside the data"):
        scan(b"N.", start, stop=stop)  # type: ignore[operator]


_OPCODES = [bytes([code]) for code, entry in enumerate(pickle_scan._TABLE) if entry is not None]
_ARGUMENTS = [b"", b"\x00", b"\x01", b"\x03\x00\x00\x00", bytes(8), b"0\n", b"12\n", b"a\nb\n",
              b"\x05abcde", b"\xff\xff\xff\xff", b"\xff"]


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    """Opcodes with plausible arguments, and now and then a random byte."""
    parts = [draw(st.sampled_from([b"", b"\x80\x02", b"\x80\x04", b"\x80\x05"]))]
    for _ in range(draw(st.integers(0, 60))):
        if draw(st.integers(0, 9)) == 0:
            parts.append(draw(st.binary(min_size=1, max_size=3)))
        else:
            parts.append(draw(st.sampled_from(_OPCODES)) + draw(st.sampled_from(_ARGUMENTS)))
    parts.append(draw(st.sampled_from([b".", b"", b"N."])))
    return b"".join(parts)


@settings(max_examples=1500, deadline=None)
@given(_streams(), st.booleans())
def test_generated_streams_are_decided_alike(data: bytes, allow_persistent: bool) -> None:
    _agree(data, allow_persistent=allow_persistent)


_PICKLES = sorted(str(path.relative_to(corpus_root())) for folder in ("parc", "mimickit")
                  for path in (corpus_root() / folder).rglob("*.pkl"))


@pytest.mark.parametrize("name", corpus_names(_PICKLES))
def test_corpus_pickles_are_decided_alike(name: str) -> None:
    data = corpus_file(name).read_bytes()
    assert _agree(data) == f"ok {len(data)}"
