"""Shell completion (click's): the line the README gives works, format names complete.

Only what our code decides is checked (the names offered); click's own wire format (a
``type,`` before each name) and its script's text are click's, and may change with it."""

from __future__ import annotations

import os
import subprocess
import sys


def _complete(words: str, cword: int) -> list[str]:
    """The names offered (each line's last comma-separated field)."""
    env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(cword),
           "_MOTIONKIT_COMPLETE": "bash_complete"}
    done = subprocess.run([sys.executable, "-m", "motionkit"], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    return [line.rsplit(",", 1)[-1] for line in done.stdout.split()]


def test_commands_and_format_names_complete() -> None:
    assert "convert" in _complete("motionkit conv", 1)
    assert _complete("motionkit formats t", 2) == ["traj", "tum"]


def test_the_bash_script_is_printed() -> None:
    env = {**os.environ, "_MOTIONKIT_COMPLETE": "bash_source"}
    done = subprocess.run([sys.executable, "-m", "motionkit"], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    assert "motionkit" in done.stdout and done.stdout.count("\n") > 3  # a script for us
