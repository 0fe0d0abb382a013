"""No ``Any`` in motionkit's public signatures (issue #21), read from the code.

Public: functions, methods, classes and class-level fields (dataclass fields among them)
whose names do not start with ``_`` (dunders such as ``__init__`` count: they are the
class's API), in modules whose dotted names have no part starting with ``_``, and what
such a module re-exports from elsewhere (as mypy --strict reads it: the names in
``__all__``, or imported ``as`` themselves). An overloaded function shows its overloads.

A signature contains ``Any`` when a parameter, return, base class or field annotation
names ``typing.Any``, directly or through module-level aliases (followed across imports);
under ``if TYPE_CHECKING`` the branch type checkers read counts. ``Any`` in bodies and
private helpers is mypy's business (``mypy --strict`` runs in ``make test`` and ``make lint``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from conftest import REPO

SRC = REPO / "src"

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class Module:
    """What the scan needs of one module."""

    name: str
    #: module-level names bound to an expression (possible type aliases)
    aliases: dict[str, ast.expr] = field(default_factory=dict)
    #: names imported from other modules: name -> (module, name there)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: module-level definitions by name (an overloaded name has several)
    defs: dict[str, list[Definition]] = field(default_factory=dict)
    #: the names it re-exports
    exports: set[str] = field(default_factory=set)


def _checked(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a type checker reads at this level (of ``if TYPE_CHECKING``, the body)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _checked(node.body)
            if ast.unparse(node.test) not in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                yield from _checked(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _checked(node.body)
            for handler in node.handlers:
                yield from _checked(handler.body)
            yield from _checked(node.orelse)
        else:
            yield node


def parse(name: str, source: str, package: bool = False) -> Module:
    """The scan's view of module ``name`` (a package's ``__init__`` when ``package``)."""
    module = Module(name)
    parent = name if package else name.rpartition(".")[0]
    listed: set[str] | None = None
    for node in _checked(ast.parse(source).body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            module.aliases[node.targets[0].id] = node.value
            if node.targets[0].id == "__all__":
                listed = set(ast.literal_eval(node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None and ast.unparse(node.annotation).endswith("TypeAlias"):
            module.aliases[node.target.id] = node.value
        elif isinstance(node, ast.ImportFrom):
            source_name = node.module or ""
            if node.level:
                parts = parent.split(".")[:len(parent.split(".")) - node.level + 1]
                source_name = ".".join(parts + ([source_name] if source_name else []))
            for alias in node.names:
                module.imports[alias.asname or alias.name] = (source_name, alias.name)
                if alias.asname == alias.name:
                    module.exports.add(alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module.defs.setdefault(node.name, []).append(node)
    if listed is not None:
        module.exports = listed
    return module


def _source_modules() -> dict[str, Module]:
    found = {}
    for path in sorted((SRC / "motionkit").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if package else parts)
        found[name] = parse(name, path.read_text(), package)
    return found


class Scan:
    """Public signatures with ``Any`` among ``modules`` (dotted name -> Module)."""

    def __init__(self, modules: Mapping[str, Module]) -> None:
        self.modules = modules

    def public_any(self) -> list[str]:
        """``module:name(...)`` for every public signature that contains ``Any``."""
        found: set[str] = set()
        for module in self.modules.values():
            if any(_private(part) for part in module.name.split(".")):
                continue
            for name, definitions in module.defs.items():
                if not _private(name):
                    found.update(self._api(module, definitions, name))
            for name in module.exports & module.imports.keys():
                source, original = module.imports[name]
                target = self.modules.get(source)
                if target is not None and original in target.defs:
                    found.update(self._api(target, target.defs[original], original))
        return sorted(found)

    def _api(self, module: Module, definitions: list[Definition], where: str) -> Iterator[str]:
        overloads = [node for node in definitions
                     if any(ast.unparse(d).endswith("overload") for d in node.decorator_list)]
        for node in overloads or definitions:
            for text in self._definition(module, node, where):
                yield f"{module.name}:{text}"

    def _definition(self, module: Module, node: Definition, where: str) -> Iterator[str]:
        if not isinstance(node, ast.ClassDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                     *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)]
            for argument in every:
                if argument.annotation is not None and self._any(module, argument.annotation):
                    yield f"{where}({argument.arg}: {ast.unparse(argument.annotation)})"
            if node.returns is not None and self._any(module, node.returns):
                yield f"{where} -> {ast.unparse(node.returns)}"
            return
        yield from (f"{where}({ast.unparse(base)})" for base in node.bases
                    if self._any(module, base))
        members: dict[str, list[Definition]] = {}
        for member in _checked(node.body):
            if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                if not _private(member.target.id) and self._any(module, member.annotation):
                    yield f"{where}.{member.target.id}: {ast.unparse(member.annotation)}"
            elif isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not _private(member.name):
                members.setdefault(member.name, []).append(member)
        for name, overloads in members.items():
            for text in self._api(module, overloads, f"{where}.{name}"):
                yield text.partition(":")[2]

    def _any(self, module: Module, annotation: ast.expr, seen: frozenset[str] = frozenset()
             ) -> bool:
        """True when ``annotation`` names ``Any``, itself or through an alias."""
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):  # "quoted"
                try:
                    quoted = ast.parse(node.value, mode="eval").body
                except SyntaxError:
                    continue
                named = self._any(module, quoted, seen)
            elif isinstance(node, ast.Name):
                named = self._names_any(module, node.id, seen)
            else:
                named = isinstance(node, ast.Attribute) and node.attr == "Any"
            if named:
                return True
        return False

    def _names_any(self, module: Module, name: str, seen: frozenset[str]) -> bool:
        key = f"{module.name}.{name}"
        if key in seen:
            return False
        seen |= {key}
        if name in module.imports:
            source, original = module.imports[name]
            if source in ("typing", "typing_extensions"):
                return original == "Any"
            target = self.modules.get(source)
            return target is not None and self._names_any(target, original, seen)
        value = module.aliases.get(name)
        return value is not None and self._any(module, value, seen)


def test_the_scan_sees_any_where_it_is() -> None:
    """Direct, aliased (also from another module), quoted, fields, methods, bases,
    overloads, re-exports from a private module; private names and bodies stay out."""
    probe = parse("motionkit.probe", '''
from typing import TYPE_CHECKING, Any, overload
from ._hidden import Shown as Shown, helper
from .other import Options
if TYPE_CHECKING:
    Opts = dict[str, Any]
else:
    Opts = dict
Fine = dict[str, int]
def direct(x: Any) -> None: ...
def aliased(x: Opts, y: Options) -> None: ...
def quoted(x: "list[Any]") -> None: ...
def returns() -> Any: ...
def fine(x: Fine, *a: int, **k: object) -> int:
    inside: Any = x
    return 0
def _private(x: Any) -> Any: ...
@overload
def over(x: int) -> int: ...
@overload
def over(x: str) -> str: ...
def over(x: Any) -> Any: ...
class Data(dict[str, Any]):
    value: Any
    _hidden: Any
    def method(self, **options: Any) -> None: ...
    def __init__(self, x: Any) -> None: ...
    def _helper(self, x: Any) -> None: ...
''')
    other = parse("motionkit.other", "from typing import Any\nOptions = dict[str, Any]\n")
    hidden = parse("motionkit._hidden", "from typing import Any\nclass Shown:\n    a: Any\n"
                   "def helper(x: Any) -> None: ...\n")
    found = Scan({m.name: m for m in (probe, other, hidden)}).public_any()
    assert found == [
        "motionkit._hidden:Shown.a: Any", "motionkit.probe:Data(dict[str, Any])",
        "motionkit.probe:Data.__init__(x: Any)", "motionkit.probe:Data.method(options: Any)",
        "motionkit.probe:Data.value: Any", "motionkit.probe:aliased(x: Opts)",
        "motionkit.probe:aliased(y: Options)", "motionkit.probe:direct(x: Any)",
        "motionkit.probe:quoted(x: 'list[Any]')", "motionkit.probe:returns -> Any",
    ]


def test_no_public_signature_contains_any() -> None:
    assert Scan(_source_modules()).public_any() == []
