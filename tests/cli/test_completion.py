"""Shell completion (click's): the line the README gives works, format names complete."""

from __future__ import annotations

import os
import subprocess
import sys


def _complete(words: str, cword: int) -> list[str]:
    env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(cword),
           "_MOTIONKIT_COMPLETE": "bash_complete"}
    done = subprocess.run([sys.executable, "-m", "motionkit"], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout.split()


def test_commands_and_format_names_complete() -> None:
    assert "plain,convert" in _complete("motionkit conv", 1)
    assert _complete("motionkit formats t", 2) == ["plain,traj", "plain,tum"]


def test_the_bash_script_is_printed() -> None:
    env = {**os.environ, "_MOTIONKIT_COMPLETE": "bash_source"}
    done = subprocess.run([sys.executable, "-m", "motionkit"], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    assert "_motionkit_completion()" in done.stdout and "complete " in done.stdout
