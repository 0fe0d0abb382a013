"""The PARC subset of MJCF: a :class:`~motionkit.model.character.Character` from a parsed tree.

PARC reads the first top-level body of ``<worldbody>``, depth first: a free root, then
bodies with no joint, one hinge, or three hinges at the body's origin (a spherical joint).
A valid MJCF outside that subset raises :class:`ParcSubsetError`, so that callers can hand
it to the general reading (:mod:`.model`) instead.
"""

from __future__ import annotations

import copy
import os
import threading
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ...._io import file_identity
from ....errors import FormatError
from ....model.character import Character
from ....model.skeleton import Shape, Skeleton
from ....spatial import quaternion as quat
from . import model
from .parse import MjBody, MjTree, guarded, parse_tree

Array = NDArray[np.float64]


class ParcSubsetError(FormatError):
    """A MuJoCo model outside the PARC subset (the general MJCF reader may read it)."""


def parse_mjcf(source: str | os.PathLike[str]) -> Character:
    """The Character of an MJCF file, as MuJoCo compiles it (FormatError where it is not
    one: file, line and column where the XML gives them)."""
    return character_of(parse_tree(source, first_only=True))


def character_of(tree: MjTree) -> Character:
    """The Character of a parsed model's first top-level body (as :func:`parse_mjcf`)."""
    return guarded(lambda: _character(tree), tree.xml.path)


def load_character(source: Character | Skeleton | str | os.PathLike[str]) -> Character:
    """A Character from an MJCF path (parsed once while the file and what it includes stay
    unchanged, :data:`_PARSED`; each caller gets its own copy, 0.25 ms against a parse's
    6-9 ms), a Skeleton, or a Character (passed through)."""
    if isinstance(source, Character):
        return source
    if isinstance(source, Skeleton):
        return Character.from_skeleton(source)
    key = os.path.realpath(source)
    with _PARSED_LOCK:
        kept = _PARSED.get(key)
    if kept is not None and _identities(kept[0]) == kept[1]:
        return copy.deepcopy(kept[2])
    main = file_identity(key)
    tree = parse_tree(source, first_only=True)
    files = (key, *sorted(set(tree.xml.files.values())))
    before = _identities(files)  # the includes are known now; the main file must not
    character = character_of(tree)  # have changed while it was parsed
    if None not in before and before[0] == main:
        with _PARSED_LOCK:
            _PARSED[key] = (files, before, copy.deepcopy(character))
            while len(_PARSED) > PARSED_MOST:
                _PARSED.pop(next(iter(_PARSED)))
    return character


#: Most character files kept parsed (a batch of clips names one or a few).
PARSED_MOST = 8
#: Each kept Character by its file's real path, with the files it was read from (the file
#: and its includes) and their identities then; never handed out itself (a caller that
#: changed it would change every later read of the file).
_PARSED: dict[str, tuple[tuple[str, ...], tuple[object, ...], Character]] = {}
_PARSED_LOCK = threading.Lock()


def _identities(files: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(file_identity(path) for path in files)


def read_character(path: str | os.PathLike[str]) -> Skeleton:
    """A PARC character as a Skeleton (its Character attached), with the masses, inertias
    and markers MuJoCo gives its bodies: those come from the general reading of the same
    parse (PARC's own model has none)."""
    tree = parse_tree(path)
    skeleton = character_of(tree).to_skeleton()
    general = model.model_of(tree)
    found = general if isinstance(general, Skeleton) else general.skeletons[0]
    # both walk the first top-level body depth first; the general reading adds massless
    # bodies for joint chains, and names may repeat
    twins = [body for body in found.bodies if "mujoco_chain" not in body.attrs]
    for body, twin in zip(skeleton.bodies, twins, strict=True):
        body.inertia, body.markers = twin.inertia, list(twin.markers)
    return skeleton


@dataclass
class _Columns:
    """The Character's per-body arrays, filled body by body."""

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    joints: list[str] = field(default_factory=list)
    pos: list[Array] = field(default_factory=list)
    rot: list[Array] = field(default_factory=list)
    axes: list[Array] = field(default_factory=list)
    limits: list[Array] = field(default_factory=list)
    shapes: list[list[Shape]] = field(default_factory=list)


def _character(tree: MjTree) -> Character:
    columns = _Columns()
    for mj in tree.bodies:
        if mj.top != 0:  # the character is the first top-level body (depth first: 0..k)
            break
        columns.names.append(mj.name)
        columns.parents.append(mj.parent)
        columns.pos.append(mj.local[:3, 3].copy())
        columns.rot.append(quat.normalize(Rotation.from_matrix(mj.local[:3, :3]).as_quat()))
        axes, limits = np.zeros((3, 3)), np.full((3, 2), np.nan)
        kind, joint = _root(tree, mj) if mj.parent < 0 else _joint(tree, mj, axes, limits)
        columns.kinds.append(kind)
        columns.joints.append(joint)
        columns.axes.append(axes)
        columns.limits.append(limits)
        columns.shapes.append([tree.shape(geom, attrs, frame) for geom, attrs, frame in mj.found.geoms])
    contacts = [node.get("name", "") for node in tree.root.iter("custom_contact_info")
                for node in node.findall("body")]
    return Character(tree.name, columns.names, np.array(columns.parents, dtype=np.intp),
                     np.array(columns.pos), np.array(columns.rot), columns.kinds, columns.joints,
                     np.array(columns.axes), np.array(columns.limits), contacts, columns.shapes)


def _subset(tree: MjTree, element: Element, message: str) -> FormatError:
    return tree.error(element, message, ParcSubsetError)


def _root(tree: MjTree, mj: MjBody) -> tuple[str, str]:
    """The root's kind and joint name: a free joint or none."""
    hinges = mj.found.joints
    if hinges and not (len(hinges) == 1 and hinges[0][1].get("type") == "free"):
        raise _subset(tree, mj.element, f"body {mj.name[:40]!r}: PARC characters have a "
                                        "free root (no other root joints)")
    free_name = None
    if mj.found.free is not None:
        free_name = mj.found.free.get("name", "root")
    elif hinges:
        free_name = hinges[0][1].get("name", "root")
    return "root", free_name or "root"


def _joint(tree: MjTree, mj: MjBody, axes: Array, limits: Array) -> tuple[str, str]:
    """A non-root body's kind and joint name; its hinge axes and limits go to ``axes`` and
    ``limits``."""
    hinges = mj.found.joints
    if not hinges:
        return "fixed", mj.name
    if len(hinges) not in (1, 3):
        raise _subset(tree, mj.element, f"body {mj.name[:40]!r}: {len(hinges)} joints in series "
                                        "are not supported by PARC (0, 1 or 3)")
    first_type = hinges[0][1].get("type", "hinge")
    for k, (hinge, attrs) in enumerate(hinges):
        kind = attrs.get("type", "hinge")
        if kind == "fixed" and len(hinges) == 1:
            break
        if kind != "hinge":
            raise _subset(tree, hinge, f"body {mj.name[:40]!r}: joint type {kind[:40]!r} "
                                       "is not supported by PARC (hinge, three hinges or fixed)")
        axes[k] = _hinge_axis(tree, mj, hinge, attrs)
        limit = tree.range(attrs, hinge, angular=True)
        if limit is not None:
            limits[k] = limit
    first_name = hinges[0][1].get("name", mj.name)
    if len(hinges) == 1:
        return ("fixed" if first_type == "fixed" else "hinge"), first_name
    return "spherical", first_name.rsplit("_", 1)[0] if "_" in first_name else first_name


def _hinge_axis(tree: MjTree, mj: MjBody, hinge: Element, attrs: dict[str, str]) -> Array:
    """A hinge's unit axis; PARC's hinges sit at the body's origin."""
    joint_pos = tree.numbers(attrs, "pos", hinge)
    if joint_pos is not None and np.any(joint_pos != 0):
        raise _subset(tree, hinge, f"body {mj.name[:40]!r}: PARC requires joint pos 0 0 0")
    axis = tree.numbers(attrs, "axis", hinge)
    axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
    if axis.size != 3:
        raise tree.error(hinge, f"<joint axis=...>: needs 3 numbers, got {axis.size}")
    length = float(np.linalg.norm(axis))
    if length < 1e-9:
        raise tree.error(hinge, f"body {mj.name[:40]!r}: zero joint axis")
    return axis / length
