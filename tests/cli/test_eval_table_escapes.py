"""``eval table`` prints paths from result files, which may come from anyone: their
control characters are escaped in the header line and the cells, on the terminal and in
``.md`` (review of issue 25, finding 9); CSV keeps them whole, for programs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from test_cli import run_cli

TITLE = "\x1b]0;pwned\x07"  # an OSC sequence: it would set the terminal's title


def _result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    t = np.arange(60) * 0.1
    rows = np.column_stack([t, np.cos(t), np.sin(t), 0 * t, 0 * t, 0 * t, 0 * t, 1 + 0 * t])
    np.savetxt(tmp_path / "ref.tum", rows)
    np.savetxt(tmp_path / "est.tum", rows + np.array([0, 0.01, 0, 0, 0, 0, 0, 0]))
    saved = tmp_path / "r.json"
    code, _, err = run_cli(["eval", "ape", str(tmp_path / "ref.tum"), str(tmp_path / "est.tum"),
                            "--save", str(saved)], capsys)
    assert code == 0, err
    document = json.loads(saved.read_text())
    document["ref"] = f"/data/{TITLE}/gt.tum"
    document["est"] = f"/data/{TITLE}/x/{TITLE}est.tum"
    saved.write_text(json.dumps(document))
    return saved


def test_table_paths_are_escaped_on_the_terminal_and_in_markdown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = _result(tmp_path, capsys)
    code, out, err = run_cli(["eval", "table", str(saved)], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert out.startswith("ref and est under /data/\\x1b]0;pwned\\x07")
    code, _, err = run_cli(["eval", "table", str(saved), "-o", str(tmp_path / "t.md")], capsys)
    assert code == 0, err
    markdown = (tmp_path / "t.md").read_text()
    assert "\x1b" not in markdown and "x/\\x1b]0;pwned\\x07est.tum" in markdown
    code, _, err = run_cli(["eval", "table", str(saved), "-o", str(tmp_path / "t.csv")], capsys)
    assert code == 0, err
    assert TITLE in (tmp_path / "t.csv").read_text()  # data for programs, kept as it is
