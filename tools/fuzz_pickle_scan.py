"""Long differential fuzzing of the pickle pre-scan: the compiled walk against the Python
walk that states its rules (same offset, same message, or a finding).

    python tools/fuzz_pickle_scan.py                     # mutation loop until stopped
    python tools/fuzz_pickle_scan.py --seconds 600
    python tools/fuzz_pickle_scan.py --atheris -- -max_total_time=600

Seeds are honest pickles of nested data (protocols 0-5) and the corpus' MimicKit/PARC
pickles (``MOTIONKIT_CORPUS`` or ``../shared/corpus``). For memory errors, build the
extension with ``-fsanitize=address,undefined`` first. Findings go to
``fuzz-findings/scan-*.pkl``. Not part of ``make bench``: it runs until stopped.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import sys
import time
from pathlib import Path

from motionkit.formats.shared.pickles import pickle_scan

ROOT = Path(__file__).resolve().parents[1]


def _outcome(scan: pickle_scan.Scan, data: bytes, allow_persistent: bool) -> str:
    try:
        return f"ok {scan(data, allow_persistent=allow_persistent)}"
    except pickle_scan.PickleProblem as exc:
        return f"refused {exc}"


def _differs(data: bytes) -> bool:
    allow = len(data) % 2 == 0
    return (_outcome(pickle_scan.scan, data, allow)
            != _outcome(pickle_scan.scan_reference, data, allow))


def _seeds() -> list[bytes]:
    values: list[object] = [[1.5, None, True], {"a": [1, 2], "b": (3, {4})}, "text", b"\x00\xff",
                            [[i, [i, (i,)]] for i in range(50)], {frozenset({1}): bytearray(b"x")}]
    seeds = [pickle.dumps(value, protocol) for value in values for protocol in range(6)]
    corpus = Path(os.environ.get("MOTIONKIT_CORPUS", ROOT.parent / "shared" / "corpus"))
    seeds += [path.read_bytes() for folder in ("parc", "mimickit")
              for path in sorted((corpus / folder).rglob("*.pkl"))[:4]]
    return seeds


def _mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) + 1)
        choice = rng.random()
        if choice < 0.4 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif choice < 0.7:
            del out[at:at + rng.randint(1, 16)]
        else:
            out[at:at] = rng.choice([b"(", b"h\x00", b"\x94", b"0", b"2", b"q\x01", b"e", b"\x8f",
                                     b"V1\n", b"\xff\xff\xff\x7f", bytes(8)])
    return bytes(out)


def _save(data: bytes) -> None:
    folder = ROOT / "fuzz-findings"
    folder.mkdir(exist_ok=True)
    path = folder / f"scan-{time.time_ns()}.pkl"
    path.write_bytes(data)
    print(f"finding: {path}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float("inf"))
    parser.add_argument("--atheris", action="store_true", help="coverage-guided (needs atheris)")
    parser.add_argument("rest", nargs="*", help="arguments for libFuzzer (after --)")
    options = parser.parse_args()
    if not pickle_scan.COMPILED:
        raise SystemExit("the compiled scan is not built: nothing to compare")
    if options.atheris:
        import atheris

        def one(data: bytes) -> None:
            if _differs(data):
                raise AssertionError("the walks disagree")

        atheris.Setup([sys.argv[0], *options.rest], one)
        atheris.Fuzz()
        return 0
    rng, seeds, count, found = random.Random(), _seeds(), 0, 0
    stop = time.monotonic() + options.seconds
    while time.monotonic() < stop:
        data = _mutate(rng, rng.choice(seeds))
        count += 1
        if _differs(data):
            found += 1
            _save(data)
        if count % 10_000 == 0:
            print(f"{count} inputs, {found} findings", flush=True)
    print(f"{count} inputs, {found} findings")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
