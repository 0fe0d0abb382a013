"""Join the sections the bench scripts wrote (``bench/out/*.md``) into ``bench/RESULTS.md``.

Run by ``make bench`` after every script; RESULTS.md is never edited by hand. A script
whose section is missing (it failed, or was not run) is named at the top.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = """# Benchmark results

Made by `make bench` on {date} (do not edit: rerun it). Each script runs motionkit and
its peers side by side in one run, in turn, and records CPU time (every thread of the
process) and wall time, the load, the thread settings and each peer's configuration, with
the goal beside each figure. Earlier hand-kept figures and their story: `bench/HISTORY.md`.
"""


def main() -> None:
    scripts = sorted(path.stem for path in HERE.glob("[!_]*.py"))
    sections: list[str] = []
    missing: list[str] = []
    for name in scripts:
        section = HERE / "out" / f"{name}.md"
        if section.exists():
            sections.append(section.read_text())
        else:
            missing.append(name)
    text = HEADER.format(date=datetime.date.today().isoformat())
    if missing:
        text += "\nNo section from: " + ", ".join(f"`bench/{m}.py`" for m in missing) + "\n"
    text += "".join("\n" + section for section in sections)
    (HERE / "RESULTS.md").write_text(text)
    print(f"bench/RESULTS.md: {len(sections)} sections", file=sys.stderr)


if __name__ == "__main__":
    main()
