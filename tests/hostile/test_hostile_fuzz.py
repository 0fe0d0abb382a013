"""Fuzzing every reader: only MotionkitError subclasses may escape (a seeded mutation
loop over the corpus, read in two child processes under a memory limit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_mutate import inputs
from hostile_run import run_child

#: Mutations per seed file (a tenth of that for seeds over 100 KB).
PER_SEED = 400


@pytest.mark.corpus
def test_only_the_error_family_escapes_any_reader(corpus: Path, tmp_path: Path) -> None:
    cases = list(inputs(corpus, tmp_path, PER_SEED))
    assert len(cases) >= 2000
    report = run_child({"fuzz": cases}, 10_000_000, 120)
    assert report["returncode"] == 0, report
    assert report["escapes"] == [], json.dumps(report["escapes"][:10], indent=1)
