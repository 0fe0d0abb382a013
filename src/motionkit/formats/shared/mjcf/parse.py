"""MJCF as MuJoCo compiles it: ``<compiler>`` settings (angle unit, Euler sequence, mesh
folder), default classes and ``childclass``, every body-frame form (quat, axisangle, euler,
xyaxes, zaxis), ``<frame>``, joints and their limits, and geoms (with mesh assets). Parsed
with defusedxml (no entities), every error with its place.

:func:`parse_tree` is the one parser: it gives every body (frames folded, classes resolved)
as an :class:`MjBody`. :mod:`.character` reads the PARC subset from it, and :mod:`.model`
maps the same tree onto neutral joints (the general reading).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

import defusedxml.ElementTree as SafeET
import numpy as np
from defusedxml import DefusedXmlException
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ...._io import file_identity, read_bytes
from ...._limits import MAX_BODIES, Budget
from ....errors import FormatError, warn
from ....model.skeleton import Shape, ShapeParams
from ....spatial import quaternion as quat
from ..xml import tolerate, wide
from .mesh import DEFAULT_RULE

Array = NDArray[np.float64]

#: Deepest nesting of bodies (real ones have ~10; most bodies: MAX_BODIES, as every reader).
MAX_BODY_DEPTH = 1_000
#: Most joints of a model (each may become a neutral body, as a MuJoCo joint chain does),
#: and most geoms and sites (each a shape or a marker). Real models have tens to hundreds;
#: the caps bound what a file of small elements costs (~5 KB of model per joint).
MAX_JOINTS = 10_000
MAX_PARTS = 100_000


def sniff(head: bytes) -> bool:
    """A MuJoCo-style model: ``<mujoco`` near the start of an XML file."""
    return b"<mujoco" in head[:4096]


def parse_tree(source: str | os.PathLike[str], first_only: bool = False,
               keep: bool = False) -> MjTree:
    """Every body of an MJCF file (or of its first top-level body only), depth first.

    ``keep`` holds the tree for the next parse of the same unchanged file (a reader's
    ``accepts`` keeps it for the ``read`` that follows); that parse takes it."""
    global _kept
    key = _identity(source, first_only)
    with _kept_lock:
        kept, _kept = _kept, None
    if kept is not None and key is not None and kept[0] == key:
        tree = kept[1]
    else:
        root, xml = _load(source)
        tree = guarded(lambda: _tree(root, xml, first_only), source)
    if keep and key is not None:
        with _kept_lock:
            _kept = (key, tree)
    return tree


#: The one tree kept by ``parse_tree(keep=True)``, with the identity of its file.
_kept: tuple[tuple[object, ...], MjTree] | None = None
_kept_lock = threading.Lock()


def _identity(source: str | os.PathLike[str], first_only: bool) -> tuple[object, ...] | None:
    """One version of a file (:func:`file_identity`) read with ``first_only``."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    found = file_identity(source)
    return None if found is None else (*found, first_only)


_T = TypeVar("_T")


def guarded(work: Callable[[], _T], source: str | os.PathLike[str] | None) -> _T:
    """``work()``, with a stray error of a malformed model as one FormatError naming the file."""
    try:
        return work()
    except FormatError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError,
            RecursionError, MemoryError) as exc:
        raise FormatError(f"bad character model ({type(exc).__name__}: {str(exc)[:200]})",
                          source) from None


#: Most files ``<include>`` may bring in, and most bytes they may hold together (a parsed
#: element tree takes ~50 times its text: 8 MB of XML is ~400 MB of memory).
MAX_INCLUDES = 100
MAX_INCLUDED_BYTES = 8 << 20


def _load(source: str | os.PathLike[str]) -> tuple[Element, _Xml]:
    data = read_bytes(source)
    root, at = _parse_xml(data, source)
    xml = _Xml(source, at, size=len(data))
    _include(root, xml)
    return root, xml


def _parse_xml(data: bytes, source: Any) -> tuple[Element, dict[int, tuple[int, int]]]:
    encoded = wide(data)
    if encoded:
        raise FormatError(f"{encoded} text, which MuJoCo's parser (tinyxml2) cannot read; "
                          "save it as UTF-8", source, 1)
    data, encoding, repaired = tolerate(data)
    if repaired:
        warn(f"{os.fspath(source)}: not well-formed XML that MuJoCo's parser (tinyxml2) "
             f"accepts, read as MuJoCo does: {'; '.join(repaired[:3])}")
    where = _Positions()
    parser = SafeET.DefusedXMLParser(target=where, encoding=encoding)
    where.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except ParseError as exc:
        line, column = getattr(exc, "position", (None, None))
        raise FormatError(f"not well-formed XML: {exc}", source, line,
                          column + 1 if column is not None else None) from None
    except DefusedXmlException as exc:
        raise FormatError(f"refused XML feature: {exc}", source) from None
    except LookupError as exc:  # <?xml encoding="..."?> names a codec Python does not have
        raise FormatError(f"unknown XML encoding ({str(exc)[:80]})", source, 1) from None
    return root, where.at


def _include(root: Element, xml: _Xml) -> None:
    """Replace every ``<include file=…>`` by the children of that file's root element, as
    MuJoCo does before it reads the model: a path is looked up in the main file's folder,
    then in the including file's, and must stay inside the main file's folder; each file
    once, nested includes too, at most MAX_INCLUDES files and MAX_INCLUDED_BYTES bytes.
    Their elements keep their own file, line and column."""
    if not isinstance(xml.path, (str, os.PathLike)):
        if next(root.iter("include"), None) is not None:
            raise xml.error(next(root.iter("include")), "<include> needs the model as a file")
        return
    folder = os.path.realpath(os.path.dirname(os.path.abspath(os.fspath(xml.path))))
    seen = {os.path.realpath(os.fspath(xml.path))}  # a file including itself: twice
    total = 0
    pending = [(parent, child) for parent in root.iter() for child in parent
               if child.tag == "include"]
    while pending:
        parent, node = pending.pop()
        path = _included_path(node, xml, folder)
        if path in seen:
            raise xml.error(node, f"<include file={node.get('file', '')[:80]!r}>: included twice")
        seen.add(path)
        if len(seen) > MAX_INCLUDES + 1:
            raise xml.error(node, f"more than {MAX_INCLUDES} included files")
        total += os.path.getsize(path)
        if total > MAX_INCLUDED_BYTES:
            raise xml.error(node, f"included files hold more than {MAX_INCLUDED_BYTES} bytes")
        data = read_bytes(path, MAX_INCLUDED_BYTES)  # a regular file, however it changed
        xml.size += len(data)
        included, at = _parse_xml(data, path)
        xml.at.update(at)
        xml.files.update((key, path) for key in at)
        index = list(parent).index(node)
        children = list(included)
        parent[index:index + 1] = children
        pending += [(parent, child) for child in children if child.tag == "include"]
        pending += [(owner, child) for top in children for owner in top.iter()
                    for child in owner if child.tag == "include"]


def _included_path(node: Element, xml: _Xml, folder: str) -> str:
    """The regular file an ``<include>`` names (main folder first, then the including
    file's), inside ``folder``; a FormatError at the element otherwise."""
    name = node.get("file")
    if not name:
        raise xml.error(node, "<include> needs a file")
    if len(node):
        raise xml.error(node, "<include> cannot have children")
    shown = f"<include file={name[:80]!r}>"
    owner = xml.files.get(id(node))
    places = [folder] + ([os.path.dirname(owner)] if owner is not None else [])
    for place in places:
        path = os.path.realpath(os.path.join(place, name))
        if os.path.commonpath([folder, path]) != folder:
            raise xml.error(node, f"{shown} lies outside the model's folder")
        if os.path.isfile(path):  # never a folder, FIFO or device (opening one may block)
            return path
    raise xml.error(node, f"{shown}: no such file")


class _Positions(TreeBuilder):
    """An ElementTree builder that remembers where each element starts (line, column)."""

    def __init__(self) -> None:
        super().__init__()
        self.parser: Any = None
        self.at: dict[int, tuple[int, int]] = {}

    def start(self, tag: Any, attrs: Any) -> Element:
        element = super().start(tag, attrs)
        expat = getattr(self.parser, "parser", None)
        if expat is not None:
            self.at[id(element)] = (expat.CurrentLineNumber, expat.CurrentColumnNumber + 1)
        return element


@dataclass(eq=False)
class _Xml:
    """The file being parsed: errors name it and the element's line and column."""

    path: Any
    at: dict[int, tuple[int, int]]
    #: the file of each element brought in by ``<include>`` (the others are ``path``'s)
    files: dict[int, str] = field(default_factory=dict)
    #: bytes of the file and of everything it includes: what budgets are measured against
    size: int = 0

    def error(self, element: Element, message: str,
              kind: type[FormatError] = FormatError) -> FormatError:
        line, column = self.at.get(id(element), (None, None))
        return kind(message, self.files.get(id(element), self.path), line, column)


@dataclass(eq=False)
class _Compiler:
    """The settings of every ``<compiler>`` element (later attributes override earlier ones,
    and apply to the whole file, also to angles written before them)."""

    degree: bool = True
    eulerseq: str = "xyz"
    autolimits: bool = True
    meshdir: str = ""
    strippath: bool = False

    @classmethod
    def of(cls, root: Element, xml: _Xml) -> _Compiler:
        out = cls()
        for node in root.iter("compiler"):
            angle = node.get("angle")
            if angle is not None:
                if angle not in ("degree", "radian"):
                    raise xml.error(node, f'<compiler angle="{angle[:40]}">: degree or radian')
                out.degree = angle == "degree"
            seq = node.get("eulerseq")
            if seq is not None:
                if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
                    raise xml.error(node, f'<compiler eulerseq="{seq[:40]}">: three of xyzXYZ')
                out.eulerseq = seq
            if node.get("coordinate", "local") != "local":
                raise xml.error(node, '<compiler coordinate="global"> is not supported (MuJoCo '
                                "refuses it too)")
            if node.get("autolimits") is not None:
                out.autolimits = node.get("autolimits") == "true"
            if node.get("meshdir") is not None:
                out.meshdir = node.get("meshdir", "")
            elif node.get("assetdir") is not None:
                out.meshdir = node.get("assetdir", "")
            if node.get("strippath") is not None:
                out.strippath = node.get("strippath") == "true"
        return out

    def angle(self, value: Array) -> Array:
        """Angles in the file's unit, as radians."""
        return np.radians(value) if self.degree else value


#: Deepest nesting of ``<default>`` classes, and most attributes all classes may hold
#: together (each class copies what it inherits: a deep chain costs its square).
MAX_DEFAULT_DEPTH = 100
MAX_DEFAULT_ATTRIBUTES = 1_000_000
#: Inherited attributes any model may hand out, however small its file (real models hand
#: out thousands to tens of thousands); beyond it, one per byte of the model's text.
INHERITED_FLOOR = 1 << 20


class _Defaults:
    """MJCF default classes: class name → element tag → attributes (inherited down)."""

    def __init__(self, root: Element, xml: _Xml) -> None:
        self.classes: dict[str, dict[str, dict[str, str]]] = {}
        self.xml = xml
        #: every element gets its own copy of its class's attributes: a class of many
        #: attributes used many times costs their product, charged here against the size
        self.budget = Budget("inherited attribute", xml.path, xml.size, per_byte=1,
                             floor=INHERITED_FLOOR)
        held = 0
        stack: list[tuple[Element, dict[str, dict[str, str]], int]] = [
            (node, {}, 0) for node in reversed(root.findall("default"))]
        while stack:
            node, inherited, depth = stack.pop()
            if depth >= MAX_DEFAULT_DEPTH:
                raise xml.error(node, f"<default> classes nest deeper than {MAX_DEFAULT_DEPTH}")
            held += sum(len(attrs) for attrs in inherited.values()) + len(node)
            if held > MAX_DEFAULT_ATTRIBUTES:
                raise xml.error(node, "<default> classes hold more than "
                                      f"{MAX_DEFAULT_ATTRIBUTES} attributes in all")
            name = node.get("class", "main" if depth == 0 else "")
            own = {tag: dict(attrs) for tag, attrs in inherited.items()}
            for child in node:
                if child.tag != "default":
                    own.setdefault(child.tag, {}).update(child.attrib)
            self.classes[name] = own
            stack.extend((child, own, depth + 1) for child in reversed(node.findall("default")))

    def attrs(self, element: Element, active: str) -> dict[str, str]:
        """The element's attributes over those of its class (``class``, else ``active``)."""
        name = element.get("class", active)
        inherited = self.classes.get(name, {}).get(element.tag, {})
        if inherited:
            line, column = self.xml.at.get(id(element), (None, None))
            self.budget.charge(len(inherited), line, column)
        out = dict(inherited)
        out.update(element.attrib)
        return out


def _numbers(attrs: dict[str, str], name: str, element: Element, xml: _Xml) -> Array | None:
    """Attribute ``name`` of resolved ``attrs`` as finite numbers (None if absent)."""
    text = attrs.get(name)
    if text is None:
        return None
    try:
        if "_" in text:  # Python's float takes 1_0 as 10; MuJoCo does not
            raise ValueError
        floats = [float(v) for v in text.split()]
    except ValueError:
        raise xml.error(element, f"<{element.tag} {name}=...>: not numbers") from None
    if not all(map(math.isfinite, floats)):  # per value: a geom has a handful
        raise xml.error(element, f"<{element.tag} {name}=...>: numbers must be finite")
    return np.array(floats, dtype=np.float64)


def _frame(attrs: dict[str, str], element: Element, xml: _Xml, compiler: _Compiler) -> Array:
    """The 4×4 frame of an element: ``pos`` and one of quat / axisangle / euler / xyaxes /
    zaxis, as MuJoCo compiles them."""
    out = np.eye(4)
    pos = _numbers(attrs, "pos", element, xml)
    if pos is not None:
        if pos.size != 3:
            raise xml.error(element, f"<{element.tag} pos=...>: needs 3 numbers")
        out[:3, 3] = pos
    given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if k in attrs]
    if len(given) > 1:
        raise xml.error(element, f"<{element.tag}>: more than one orientation ({', '.join(given)})")
    if not given:
        return out
    kind = given[0]
    values = _numbers(attrs, kind, element, xml)
    sizes = {"quat": 4, "axisangle": 4, "euler": 3, "xyaxes": 6, "zaxis": 3}
    if values is None or values.size != sizes[kind]:
        raise xml.error(element, f"<{element.tag} {kind}=...>: needs {sizes[kind]} numbers")
    if kind == "quat":
        if np.linalg.norm(values) < 1e-9:
            raise xml.error(element, f"<{element.tag} quat=...>: zero quaternion")
        out[:3, :3] = Rotation.from_quat(quat.wxyz_to_xyzw(values)).as_matrix()
    elif kind == "axisangle":
        norm = np.linalg.norm(values[:3])
        if norm < 1e-9:
            raise xml.error(element, f"<{element.tag} axisangle=...>: zero axis")
        angle = float(compiler.angle(values[3:]).item())
        out[:3, :3] = Rotation.from_rotvec(values[:3] / norm * angle).as_matrix()
    elif kind == "euler":  # MuJoCo's lower case = intrinsic, SciPy's upper case
        out[:3, :3] = Rotation.from_euler(compiler.eulerseq.swapcase(),
                                          compiler.angle(values)).as_matrix()
    elif kind == "xyaxes":
        x, y = values[:3], values[3:]
        if np.linalg.norm(x) < 1e-9:
            raise xml.error(element, f"<{element.tag} xyaxes=...>: zero x axis")
        x = x / np.linalg.norm(x)
        y = y - (y @ x) * x
        if np.linalg.norm(y) < 1e-9:
            raise xml.error(element, f"<{element.tag} xyaxes=...>: y parallel to x")
        y = y / np.linalg.norm(y)
        out[:3, :3] = np.column_stack([x, y, np.cross(x, y)])
    else:
        out[:3, :3] = _zaxis(values, element, xml)
    return out


def _zaxis(direction: Array, element: Element, xml: _Xml) -> Array:
    """The smallest rotation taking +z to ``direction``."""
    norm = np.linalg.norm(direction)
    if norm < 1e-9:
        raise xml.error(element, f"<{element.tag}>: zero z axis")
    z = direction / norm
    axis = np.cross([0.0, 0.0, 1.0], z)
    sin, cos = np.linalg.norm(axis), float(z[2])
    if sin < 1e-12:
        return np.eye(3) if cos > 0 else np.diag([1.0, -1.0, -1.0])
    matrix: Array = Rotation.from_rotvec(axis / sin * np.arctan2(sin, cos)).as_matrix()
    return matrix


@dataclass(eq=False)
class _Tally:
    """Joints and geoms-plus-sites found so far in the whole model, held to their caps."""

    joints: int = 0
    parts: int = 0

    def joint(self, element: Element, xml: _Xml) -> None:
        self.joints += 1
        if self.joints > MAX_JOINTS:
            raise xml.error(element, f"more than {MAX_JOINTS} joints in the model")

    def part(self, element: Element, xml: _Xml) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise xml.error(element, f"more than {MAX_PARTS} geoms and sites in the model")


@dataclass(eq=False)
class _Found:
    """A body's joints and geoms (through ``<frame>`` elements) and its child bodies."""

    joints: list[tuple[Element, dict[str, str]]] = field(default_factory=list)
    geoms: list[tuple[Element, dict[str, str], Array]] = field(default_factory=list)
    bodies: list[tuple[Element, Array, str]] = field(default_factory=list)
    free: Element | None = None
    #: every <joint> and <freejoint> in document order (a freejoint as type="free")
    every_joint: list[tuple[Element, dict[str, str]]] = field(default_factory=list)
    sites: list[tuple[Element, dict[str, str], Array]] = field(default_factory=list)
    inertial: tuple[Element, dict[str, str], Array] | None = None


def _contents(body: Element, active: str, defaults: _Defaults, xml: _Xml,
              compiler: _Compiler, tally: _Tally) -> _Found:
    """Walk a body's children, composing ``<frame>`` transforms and ``childclass``."""
    found = _Found()
    stack: list[tuple[Iterator[Element], Array, str]] = [(iter(body), np.eye(4), active)]
    while stack:  # document order, descending into <frame> where it stands
        children, frame, cls = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        if len(stack) > MAX_BODY_DEPTH:
            raise xml.error(child, f"frames nest deeper than {MAX_BODY_DEPTH} levels")
        if child.tag in ("joint", "freejoint"):
            tally.joint(child, xml)
        elif child.tag in ("geom", "site"):
            tally.part(child, xml)
        if child.tag == "joint":
            found.joints.append((child, defaults.attrs(child, cls)))
            found.every_joint.append(found.joints[-1])
        elif child.tag == "freejoint":
            found.free = child  # a <freejoint> takes no defaults
            found.every_joint.append((child, {**child.attrib, "type": "free"}))
        elif child.tag == "site":
            found.sites.append((child, defaults.attrs(child, cls), frame))
        elif child.tag == "inertial":
            if found.inertial is not None:
                raise xml.error(child, "a body has one <inertial>")
            found.inertial = (child, dict(child.attrib), frame)
        elif child.tag == "geom":
            attrs = defaults.attrs(child, cls)
            found.geoms.append((child, attrs, frame))
        elif child.tag == "body":
            found.bodies.append((child, frame, cls))
        elif child.tag == "frame":
            inner = frame @ _frame(defaults.attrs(child, cls), child, xml, compiler)
            stack.append((iter(child), inner, child.get("childclass", cls)))
        elif child.tag in ("replicate", "attach"):
            raise xml.error(child, f"<{child.tag}> is not supported yet")
    return found


def _joint_range(attrs: dict[str, str], element: Element, xml: _Xml,
                 compiler: _Compiler, angular: bool = True) -> Array | None:
    """A joint's limits as MuJoCo compiles them (radians where ``angular``), or None if
    unlimited."""
    values = _numbers(attrs, "range", element, xml)
    limited = attrs.get("limited", "auto")
    if limited == "auto":
        if values is not None and not compiler.autolimits:
            raise xml.error(element, "<joint range=...> without limited=\"true\" under "
                            "<compiler autolimits=\"false\">")
        on = values is not None
    else:
        on = limited == "true"
    if not on:
        return None
    if values is None or values.size != 2:
        raise xml.error(element, "<joint range=...>: needs 2 numbers")
    return compiler.angle(values) if angular else values


@dataclass(eq=False)
class MjBody:
    """One MJCF body: ``local`` = its frame in the parent body's (``<frame>``s folded in);
    joints, geoms, sites and ``<inertial>`` with their class defaults resolved."""

    element: Element
    name: str
    parent: int  # index in MjTree.bodies, -1 = the world body
    top: int  # index of its top-level ancestor (itself for a top-level body)
    local: Array
    found: _Found


@dataclass(eq=False)
class MjTree:
    """A parsed MJCF model: its bodies depth first (MuJoCo's order) and what reads them."""

    name: str
    root: Element
    xml: _Xml
    compiler: _Compiler
    meshes: dict[str, MeshAsset]
    bodies: list[MjBody]
    world: _Found  # what <worldbody> holds itself (static geoms, sites)
    shapes: dict[int, Shape] = field(default_factory=dict)  # id(geom element) → its Shape

    def error(self, element: Element, message: str,
              kind: type[FormatError] = FormatError) -> FormatError:
        return self.xml.error(element, message, kind)

    def numbers(self, attrs: dict[str, str], name: str, element: Element) -> Array | None:
        return _numbers(attrs, name, element, self.xml)

    def frame(self, attrs: dict[str, str], element: Element) -> Array:
        return _frame(attrs, element, self.xml, self.compiler)

    def range(self, attrs: dict[str, str], element: Element, angular: bool) -> Array | None:
        """A joint's ``range`` as MuJoCo compiles it (radians where ``angular``), or None."""
        return _joint_range(attrs, element, self.xml, self.compiler, angular)

    def shape(self, geom: Element, attrs: dict[str, str], frame: Array) -> Shape:
        """The geom's Shape, made once per tree (the PARC and the general readings of one
        parse share it, as a Character and its Skeleton do)."""
        made = self.shapes.get(id(geom))
        if made is None:
            made = self.shapes[id(geom)] = _shape(geom, attrs, frame, self.meshes,
                                                  self.compiler, self.xml)
        return made


def _tree(root: Element, xml: _Xml, first_only: bool) -> MjTree:
    path = xml.path
    if root.tag != "mujoco":
        raise FormatError(f"not a MuJoCo/PARC character (root element <{root.tag:.40}>)", path)
    compiler = _Compiler.of(root, xml)
    defaults = _Defaults(root, xml)
    meshes = _meshes(root, defaults, compiler, xml)
    world = root.find("worldbody")
    if world is None:
        raise FormatError("no <worldbody>", path)
    for node in root.iter():
        if node.tag in ("replicate", "attach"):
            raise xml.error(node, f"<{node.tag}> is not supported yet")
    tally = _Tally()
    first_level = _contents(world, world.get("childclass", "main"), defaults, xml, compiler,
                            tally)
    if not first_level.bodies:
        raise FormatError("no <body> inside <worldbody>", path)
    tops = first_level.bodies[:1] if first_only else first_level.bodies
    bodies: list[MjBody] = []
    depths: list[int] = []
    stack: list[tuple[Element, int, Array, str]] = [
        (body, -1, frame, cls) for body, frame, cls in reversed(tops)]
    while stack:
        element, parent, outer, active = stack.pop()
        index = len(bodies)
        if index >= MAX_BODIES:
            raise xml.error(element, f"more than {MAX_BODIES} bodies")
        depths.append(depths[parent] + 1 if parent >= 0 else 0)
        if depths[-1] > MAX_BODY_DEPTH:
            raise xml.error(element, f"bodies nest deeper than {MAX_BODY_DEPTH} levels")
        local = outer @ _frame(dict(element.attrib), element, xml, compiler)
        found = _contents(element, element.get("childclass", active), defaults, xml, compiler,
                          tally)
        top = index if parent < 0 else bodies[parent].top
        bodies.append(MjBody(element, element.get("name") or f"body{index}", parent, top,
                             local, found))
        stack.extend((child, index, frame, cls) for child, frame, cls in reversed(found.bodies))
    return MjTree(root.get("model", "character"), root, xml, compiler, meshes, bodies,
                  first_level)


@dataclass(eq=False)
class MeshAsset:
    """A ``<mesh file=…>`` asset: the file as MuJoCo resolves it, its scale and inertia
    rule, and the element (for messages)."""

    file: str
    scale: Array
    inertia: str
    element: Element
    refpos: Array | None = None
    refquat: Array | None = None  # w x y z


def _meshes(root: Element, defaults: _Defaults, compiler: _Compiler,
            xml: _Xml) -> dict[str, MeshAsset]:
    """Mesh assets by name."""
    out: dict[str, MeshAsset] = {}
    base = os.path.dirname(os.fspath(xml.path)) if isinstance(xml.path, (str, os.PathLike)) \
        else ""
    for asset in root.findall("asset"):
        for mesh in asset.findall("mesh"):
            attrs = defaults.attrs(mesh, "main")
            file_name = attrs.get("file")
            if file_name is None:
                continue
            if compiler.strippath:
                file_name = os.path.basename(file_name)
            name = attrs.get("name") or os.path.splitext(os.path.basename(file_name))[0]
            if not os.path.isabs(file_name):
                folder = compiler.meshdir
                file_name = os.path.normpath(os.path.join(
                    folder if os.path.isabs(folder) else os.path.join(base, folder), file_name))
            scale = _numbers(attrs, "scale", mesh, xml)
            refpos = _numbers(attrs, "refpos", mesh, xml)
            refquat = _numbers(attrs, "refquat", mesh, xml)
            for value, count, key in ((refpos, 3, "refpos"), (refquat, 4, "refquat")):
                if value is not None and value.size != count:
                    raise xml.error(mesh, f"<mesh {key}=...>: needs {count} numbers")
            out[name] = MeshAsset(file_name, np.ones(3) if scale is None else np.resize(scale, 3),
                                  attrs.get("inertia", DEFAULT_RULE), mesh, refpos, refquat)
    return out


_CYCLE3 = np.arange(3)


def _shape(geom: Element, attrs: dict[str, str], frame: Array,
           meshes: dict[str, MeshAsset], compiler: _Compiler, xml: _Xml) -> Shape:
    """A MuJoCo ``<geom>`` (class defaults resolved) as a Shape: sizes as DART's full lengths,
    ``fromto`` for capsule/cylinder/box/ellipsoid, mesh assets resolved to file and scale."""
    kind = attrs.get("type", "sphere")
    size = _numbers(attrs, "size", geom, xml)
    if size is not None and not 1 <= size.size <= 3:
        raise xml.error(geom, f"<geom size=...>: needs 1 to 3 numbers, got {size.size}")
    size = np.zeros(1) if size is None else size
    transform = frame @ _frame(attrs, geom, xml, compiler)
    params: ShapeParams = {}
    ends = _numbers(attrs, "fromto", geom, xml) if kind in (
        "capsule", "cylinder", "box", "ellipsoid") else None
    if ends is not None:
        if ends.size != 6:
            raise xml.error(geom, "<geom fromto=...>: needs 6 numbers")
        axis = ends[3:] - ends[:3]
        length = float(np.linalg.norm(axis))
        local = np.eye(4)
        local[:3, 3] = 0.5 * (ends[:3] + ends[3:])
        if length > 0:
            local[:3, :3] = _zaxis(axis, geom, xml)
        transform = frame @ local
    if kind in ("capsule", "cylinder"):
        params["radius"] = float(size[0])
        if ends is not None:
            params["height"] = float(np.linalg.norm(ends[3:] - ends[:3]))
        else:
            params["height"] = 2.0 * float(size[1]) if size.size > 1 else 0.0
    elif kind == "sphere":
        params["radius"] = float(size[0])
    elif kind in ("box", "ellipsoid"):
        if ends is not None:
            half = float(np.linalg.norm(ends[3:] - ends[:3])) / 2
            params["size"] = 2.0 * np.array([size[0], size[0], half])
        else:
            params["size"] = 2.0 * size[_CYCLE3 % size.size]  # 1 or 2 numbers repeat
    elif kind == "mesh":
        mesh = attrs.get("mesh", "")
        if mesh not in meshes:
            raise xml.error(geom, f"geom {attrs.get('name', '')[:40]!r}: mesh {mesh[:40]!r} is "
                            "not a mesh asset with a file")
        params["file_name"], params["scale"] = meshes[mesh].file, meshes[mesh].scale.copy()
        params["mesh"] = mesh
    elif kind != "plane":
        raise xml.error(geom, f"geom {attrs.get('name', '')[:40]!r}: unknown type {kind[:40]!r}")
    kept: dict[str, object] = {k: attrs[k] for k in ("name", "density") if attrs.get(k) is not None}
    visual_only = attrs.get("contype", "1") == "0" and attrs.get("conaffinity", "1") == "0"
    return Shape(kind, params, transform, role="visual" if visual_only else "collision",
                 attrs=kept)
