"""convert's -O options: ``lossy`` is convert's own flag, never a writer option (it reached
the writer twice: an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import corpus_file
from test_cli import run_cli


@pytest.mark.corpus
def test_lossy_as_an_option_is_one_line_naming_the_flag(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["convert", str(corpus_file("bvh", "example.bvh")),
                            str(tmp_path / "b.bvh"), "-O", "lossy=true"], capsys)
    assert code == 2 and "--lossy" in err and "internal error" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "b.bvh").exists()
