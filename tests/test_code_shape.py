"""No function or method in motionkit is longer than 60 lines (issue 21), from its ``def``
line to its last line. Complexity (at most 25) is ruff's C901, run by ``make test``.

One exception: ``scan_reference``, the Python statement of the rules the compiled pickle
scan follows, kept as one walk so that it reads as the specification it is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "src" / "motionkit"
MAX_LINES = 60
EXEMPT = frozenset({("formats/shared/pickles/pickle_scan.py", "scan_reference")})


def _functions(path: Path) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, line count) of every function and method in a file."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert child.end_lineno is not None
                yield prefix + child.name, child.lineno, child.end_lineno - child.lineno + 1
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), "")


def test_no_function_is_longer_than_60_lines() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for name, line, count in _functions(path):
            if count > MAX_LINES and (relative, name) not in EXEMPT:
                too_long.append(f"{relative}:{line} {name}: {count} lines")
    assert too_long == []


def test_the_exemptions_name_functions_that_exist() -> None:
    for relative, name in EXEMPT:
        assert name in {found for found, _, _ in _functions(PACKAGE / relative)}
