"""The import rules of docs/architecture.md, read from the code (every import, also those
inside functions and under TYPE_CHECKING).

- A format folder is a leaf: it imports the shared codecs, the contract (registry, loss)
  and the core, never another format.
- The shared codecs import no format; the core (errors, I/O helpers, spatial, model,
  kinematics, ops) imports nothing of ``formats``.
- No module imports itself through others, and no two packages import each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO

SRC = REPO / "src"
FORMAT_FOLDERS = frozenset({"bvh", "c3d", "choreonoid", "containers", "dart", "gltf", "hdf5", "lerobot",
                            "mimickit", "mujoco", "parc", "rosbag", "trajectory", "urdf"})
CONTRACT = frozenset({"motionkit.formats", "motionkit.formats.registry", "motionkit.formats.loss"})
#: The core, lowest first: each part may import only the parts before it (and itself).
CORE = ("errors", "_accel", "_limits", "_io", "spatial", "model", "kinematics", "ops", "quality")


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in (SRC / "motionkit").rglob("*.py")}


def _imports(name: str) -> Iterator[str]:
    """Every motionkit module ``name`` imports (a package's submodule where one is named)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                       for a in node.names]
        else:
            continue
        yield from (target for target in targets if target.split(".")[0] == "motionkit")


EDGES = {(name, target) for name in MODULES for target in _imports(name) if target != name}


def unit(name: str) -> str:
    """What a rule talks about: a format folder, the shared codecs, the contract, a core
    part, or another top-level package."""
    parts = name.split(".")
    if name in CONTRACT:
        return "contract"
    if len(parts) > 2 and parts[1] == "formats":
        return "shared" if parts[2] == "shared" else f"format:{parts[2]}"
    return parts[1] if len(parts) > 1 else "motionkit"


def test_every_format_module_is_in_a_known_folder() -> None:
    folders = {unit(name) for name in MODULES if unit(name).startswith("format:")}
    assert folders == {f"format:{folder}" for folder in FORMAT_FOLDERS}


def test_a_format_folder_imports_no_other_format_and_nothing_above_the_core() -> None:
    allowed = {"shared", "contract", *CORE}
    wrong = sorted(f"{a} -> {b}" for a, b in EDGES if unit(a).startswith("format:")
                   and unit(b) != unit(a) and unit(b) not in allowed)
    assert wrong == []


def test_the_shared_codecs_import_no_format() -> None:
    allowed = {"shared", "contract", *CORE}
    assert sorted(f"{a} -> {b}" for a, b in EDGES
                  if unit(a) == "shared" and unit(b) not in allowed) == []


@pytest.mark.parametrize("part", CORE)
def test_the_core_imports_only_what_lies_below_it(part: str) -> None:
    below = set(CORE[:CORE.index(part) + 1])
    assert sorted(f"{a} -> {b}" for a, b in EDGES if unit(a) == part and unit(b) not in below) == []


def _cycle(edges: set[tuple[str, str]]) -> list[str]:
    """One cycle of the directed graph, or an empty list."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_no_module_imports_itself_through_others() -> None:
    # a package's __init__ re-exporting its modules is not a cycle of code; the top-level
    # package is no such exception (importing it loads the api and the model)
    edges = {(a, b) for a, b in EDGES if not (MODULES[b].name == "__init__.py" and b != "motionkit"
                                             and a.startswith(b + "."))}
    assert _cycle(edges) == []


def test_no_two_packages_import_each_other() -> None:
    both = sorted({tuple(sorted((unit(a), unit(b)))) for a, b in EDGES
                   if unit(a) != unit(b) and any(unit(c) == unit(b) and unit(d) == unit(a)
                                                 for c, d in EDGES)})
    assert both == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == ["a", "b", "c", "a"]
    assert _cycle({("a", "b"), ("b", "c")}) == []
