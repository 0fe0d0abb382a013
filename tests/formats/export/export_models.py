"""Models the export tests write: every corpus model motionkit reads, plus a synthetic tree
with every joint type at random frames, and the FK helpers the oracles are compared with."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root
from motionkit.kinematics import forward, poses_to_matrices
from motionkit.model.skeleton import Body, Dof, Inertia, Joint, Shape, Skeleton, World

Array = np.ndarray

#: Where the corpus keeps models (BVH: the skeleton of the motion).
PATTERNS = ("choreonoid/*.body", "choreonoid/body/*.body", "choreonoid/oracle/*.body",
            "dart/skel/*.skel", "dart/skel/test/*.skel", "dart/skel/test/gazebo/*.skel",
            "dartenv/*.skel", "parc/character/*.xml", "mimickit/*.xml", "bvh/*.bvh")


def _readable() -> list[str]:
    """Every corpus model motionkit reads, relative to the corpus root (the rule files
    that are broken on purpose are left out: their readers' tests cover them)."""
    root = corpus_root()
    found = []
    for pattern in PATTERNS:
        for path in sorted(root.glob(pattern)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    mk.read(path)
            except mk.MotionkitError:
                continue
            found.append(path.relative_to(root).as_posix())
    return found


CORPUS = corpus_names(_readable())
#: How many corpus models read today: a reader that starts refusing one fails the count
#: test instead of quietly shrinking the export tests.
READABLE = 89


def skeletons(relative: str) -> list[Skeleton]:
    """Every skeleton with bodies in a corpus file (skipped when the corpus is missing)."""
    path = corpus_file(*relative.split("/"))
    with warnings.catch_warnings():  # what the readers warn about is their tests' concern
        warnings.simplefilter("ignore")
        obj = mk.read(path)
    if isinstance(obj, mk.Motion):
        assert obj.skeleton is not None
        found = [obj.skeleton]
    elif isinstance(obj, mk.World):
        found = list(obj.skeletons)
    else:
        assert isinstance(obj, Skeleton)
        found = [obj]
    return [s for s in found if s.bodies]


def finite(skeleton: Skeleton) -> bool:
    """False for a model with inf/NaN frames or masses (every writer refuses those)."""
    return all(np.all(np.isfinite(v)) for b in skeleton.bodies for v in (
        b.joint.parent_to_joint, b.joint.child_to_joint, b.inertia.com, [b.inertia.mass]))


def write_or_refuse(path: Path, skeleton: Skeleton) -> bool:
    """Write ``skeleton`` (lossy); True when written, False when refused for non-finite
    numbers, as it must be."""
    if finite(skeleton):
        mk.write(path, skeleton, lossy=True)
        return True
    with pytest.raises(mk.ConversionError, match="non-finite"):
        mk.write(path, skeleton, lossy=True)
    return False


def corpus_ids() -> list[str]:
    return list(CORPUS)


def _frame(rng: np.random.Generator) -> Array:
    t = np.eye(4)
    t[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    t[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return t


def every_joint(seed: int = 7) -> Skeleton:
    """A chain with one joint of every exportable type, random P and C, limits on some."""
    rng = np.random.default_rng(seed)
    kinds = [("root", "free", {}), ("hinge", "revolute", {"axes": [[1.0, 2.0, 0.5]]}),
             ("slider", "prismatic", {"axes": [[0.0, 3.0, 1.0]]}),
             ("cardan", "universal", {"axes": [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]}),
             ("shoulder", "ball", {}), ("wrist", "euler", {"axis_order": "zxy"}),
             ("shift", "translational", {}), ("slide2", "planar", {"plane": "zx"}),
             ("inner", "free", {}), ("tip", "weld", {})]
    bodies = []
    for index, (name, kind, extra) in enumerate(kinds):
        joint = Joint(f"{name}_joint", kind, _frame(rng), _frame(rng), **extra)  # type: ignore[arg-type]
        if kind == "revolute":
            joint.dofs = [Dof(joint.name, lower=-1.5, upper=2.0, damping=0.25)]
        shapes = [Shape("box", {"size": np.array([0.1, 0.2, 0.3])}, _frame(rng), "visual"),
                  Shape("cylinder", {"radius": 0.05, "height": 0.4}, _frame(rng), "collision"),
                  Shape("sphere", {"radius": 0.07}, _frame(rng), "collision")]
        moment = np.diag([0.02, 0.03, 0.04])
        bodies.append(Body(f"{name}_link", joint, index - 1,
                           inertia=Inertia(1.0 + index, rng.uniform(-0.1, 0.1, 3), moment),
                           shapes=shapes))
    return Skeleton("every_joint", bodies)



def two_skeleton_world() -> World:
    """Two :func:`every_joint` chains, the second's names suffixed ``_2`` (unique names)."""
    world = World([every_joint(1), every_joint(2)])
    for body in world.skeletons[1].bodies:
        body.name += "_2"
        body.joint.name += "_2"
        for dof in body.joint.dofs:
            dof.name += "_2"
    return world

def random_q(skeleton: Skeleton, seed: int = 0) -> Array:
    return np.random.default_rng(seed).uniform(-1.2, 1.2, skeleton.dof_count)


def world_poses(skeleton: Skeleton, q: Array) -> Array:
    """motionkit's FK: world transforms ``(bodies, 4, 4)``."""
    return poses_to_matrices(forward(skeleton, q))
