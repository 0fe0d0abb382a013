"""Long fuzzing runs of one reader: coverage-guided with atheris, else a mutation loop.

    python tools/fuzz_readers.py choreonoid.seq                # until stopped
    python tools/fuzz_readers.py parc.ms -- -max_total_time=600 -rss_limit_mb=2048
    python tools/fuzz_readers.py rosbag.bag --loop --seconds 300

The module is one under ``motionkit.formats``; seeds are the corpus files the fuzz test
uses (``tests/hostile/hostile_mutate.py``; corpus from ``MOTIONKIT_CORPUS`` or
``../shared/corpus``). Only MotionkitError subclasses may escape a reader: anything else
is a finding (atheris stops and saves the input; the loop saves it under
``fuzz-findings/`` and goes on). Not part of ``make bench``: it runs until stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import random
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))

from hostile_mutate import LIST_SEED, SEEDS, mutate  # noqa: E402

from motionkit.errors import MotionkitError  # noqa: E402


def _seeds(module: str, corpus: Path) -> tuple[list[bytes], str]:
    found = [((corpus / name).read_bytes(), suffix) for name, mod, suffix, _ in SEEDS
             if mod == module and (corpus / name).is_file()]
    if module == "parc.motionlist":
        found.append((LIST_SEED, ".yaml"))
    if not found:
        raise SystemExit(f"no corpus seeds for {module} under {corpus}")
    return [data for data, _ in found], found[0][1]


def _reader(module: str) -> Any:
    return importlib.import_module(f"motionkit.formats.{module}").read


def _try(read: Any, path: Path, data: bytes) -> None:
    """Read ``data`` through a file; raise whatever escapes that is not in the family."""
    path.write_bytes(data)
    with warnings.catch_warnings(), contextlib.suppress(MotionkitError):
        warnings.simplefilter("ignore")
        read(str(path))


def _loop(read: Any, seeds: list[bytes], suffix: str, seconds: float, work: Path) -> int:
    rng = random.Random()
    findings = Path("fuzz-findings")
    path = work / f"input{suffix}"
    count = found = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = mutate(rng.choice(seeds), rng)
        count += 1
        try:
            _try(read, path, data)
        except Exception as exc:  # a finding: keep the input and go on
            found += 1
            findings.mkdir(exist_ok=True)
            saved = findings / f"{type(exc).__name__}-{count}{suffix}"
            saved.write_bytes(data)
            print(f"{saved}: {type(exc).__name__}: {exc}".splitlines()[0][:300])
            traceback.print_exc(limit=3)
    print(f"{count} inputs, {found} findings, {count / seconds:.0f} inputs/s")
    return 1 if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="format module under motionkit.formats, e.g. choreonoid.seq")
    parser.add_argument("--loop", action="store_true", help="the mutation loop even with atheris")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of a loop run")
    parser.add_argument("rest", nargs="*", help="arguments for libFuzzer (after --)")
    args = parser.parse_args()
    corpus = Path(os.environ.get("MOTIONKIT_CORPUS", ROOT.parent / "shared" / "corpus"))
    seeds, suffix = _seeds(args.module, corpus)
    read = _reader(args.module)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        try:
            import atheris
        except ImportError:
            atheris = None
        if atheris is None or args.loop:
            return _loop(read, seeds, suffix, args.seconds, work)
        seed_folder = work / "seeds"
        seed_folder.mkdir()
        for index, data in enumerate(seeds):
            (seed_folder / f"seed{index}").write_bytes(data)
        path = work / f"input{suffix}"

        def one_input(data: bytes) -> None:
            _try(read, path, data)

        atheris.instrument_all()
        atheris.Setup([sys.argv[0], *args.rest, str(seed_folder)], one_input)
        atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
