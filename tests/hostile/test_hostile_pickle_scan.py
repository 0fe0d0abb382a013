"""The pickle pre-scan skips runs of plain pushes in C: it must decide exactly as the
opcode-at-a-time loop does (same result, same error) on honest and mangled pickles."""

from __future__ import annotations

import pickle
import random

import pytest

from motionkit.formats.parc import pickle_scan


def _outcome(data: bytes) -> str:
    try:
        return f"ok {pickle_scan.scan(data)}"
    except pickle_scan.PickleProblem as exc:
        return f"refused {exc}"


def _samples() -> list[bytes]:
    rng = random.Random(3)
    honest = [pickle.dumps(value, protocol) for protocol in (2, 4, 5) for value in (
        [float(i) for i in range(3000)], list(range(-5, 70_000, 7)), [None, True, False] * 900,
        {"a": [1.5] * 50, "b": ([], {}, ()), "c": {1, 2, 3}}, [[i, [i]] for i in range(500)])]
    pushes = bytes([0x47]) + bytes(8)  # BINFLOAT 0.0
    crafted = [b"\x80\x02](" + pushes * 5000 + b"e.",  # a long run, cut in 4,096-op batches
               b"\x80\x02" + b"N" * 100_010 + b".",  # past MAX_STACK inside one run
               b"\x80\x02](" + pushes * 3 + bytes([0x47]) + b"\x00\x00",  # truncated argument
               b"\x80\x02NNNN" + b"1" * 3 + b"."]  # POP_MARK without a mark after a run
    mangled = []
    for data in honest:
        for _ in range(40):
            out = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(out))
                if rng.random() < 0.5:
                    out[at] = rng.choice(b"NJKMG\x88\x89])}(e.0t2h")
                else:
                    del out[at:at + rng.randint(1, 12)]
            mangled.append(bytes(out))
    return honest + crafted + mangled


def test_run_skipping_decides_like_one_opcode_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    samples = _samples()
    fast = [_outcome(data) for data in samples]
    monkeypatch.setattr(pickle_scan, "_PUSH_WIDTH", bytes(256))  # no run is ever skipped
    slow = [_outcome(data) for data in samples]
    assert fast == slow
    assert any(result.startswith("ok") for result in fast)
    assert any("more than" in result for result in fast)
