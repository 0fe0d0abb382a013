"""Forward kinematics: dartpy as the oracle on every corpus skeleton, plus properties."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root, require_peer
from fk_reference import joint_motion, random_transform, skeletons
from motionkit.kinematics import forward, forward_transforms, poses_to_matrices
from motionkit.model.skeleton import Body, Joint, Skeleton
from motionkit.spatial import quaternion

SKEL_DIR = corpus_root() / "dart" / "skel"
GOOD_FILES = corpus_names(sorted(p.relative_to(SKEL_DIR).as_posix() for p in SKEL_DIR.rglob("*.skel")
                                 if p.name != "test_single_body.skel"))


def quiet_read(path: Path) -> mk.World:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        return mk.read(path)


def random_q(skeleton: Skeleton, rng: np.random.Generator, frames: int) -> np.ndarray:
    lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -1.0)
    hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, 1.0)
    return rng.uniform(lo, hi, size=(frames, skeleton.dof_count))


def _dart_poses(dskel: object, q: np.ndarray) -> np.ndarray:
    out = []
    for frame in q:
        dskel.setPositions(frame)  # type: ignore[attr-defined]
        out.append([dskel.getBodyNode(k).getWorldTransform().matrix()  # type: ignore[attr-defined]
                    for k in range(dskel.getNumBodyNodes())])  # type: ignore[attr-defined]
    return np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize("name", GOOD_FILES)
def test_fk_agrees_with_dartpy(name: str) -> None:
    dart = require_peer("dartpy")
    path = corpus_file("dart", "skel", *name.split("/"))
    world = quiet_read(path)
    theirs = dart.utils.SkelParser.readWorld(str(path))  # type: ignore[attr-defined]
    assert theirs.getNumSkeletons() == len(world.skeletons)
    for index, skeleton in enumerate(world.skeletons):
        dskel = theirs.getSkeleton(index)
        assert dskel.getNumDofs() == skeleton.dof_count
        assert [dskel.getBodyNode(k).getName() for k in range(dskel.getNumBodyNodes())] == \
            [b.name for b in skeleton.bodies]
        np.testing.assert_allclose(dskel.getPositions(), skeleton.initial_positions)
        for seed in (1, 2, 3):
            q = random_q(skeleton, np.random.default_rng(seed), 4)
            rot, pos = forward_transforms(skeleton, q)
            expected = _dart_poses(dskel, q)
            if skeleton.bodies:
                assert np.abs(expected[..., :3, :3] - rot).max() <= 1e-9
                assert np.abs(expected[..., :3, 3] - pos).max() <= 1e-9


@pytest.mark.slow
def test_screw_and_translational2d_agree_with_dartpy() -> None:
    """DART's .skel reader cannot build these two; build them through dartpy's API."""
    dart = require_peer("dartpy")
    rng = np.random.default_rng(5)
    dskel = dart.dynamics.Skeleton("s")  # type: ignore[attr-defined]
    screw, first = dskel.createScrewJointAndBodyNodePair()
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    screw.setAxis(axis)
    screw.setPitch(0.37)
    p_t, c_t = random_transform(rng), random_transform(rng)
    screw.setTransformFromParentBodyNode(dart.math.Isometry3(p_t))  # type: ignore[attr-defined]
    screw.setTransformFromChildBodyNode(dart.math.Isometry3(c_t))  # type: ignore[attr-defined]
    planar, _ = dskel.createTranslationalJoint2DAndBodyNodePair(first)
    planar.setArbitraryPlane([1.0, 0.2, 0.0], [0.0, 1.0, 0.5])
    p2 = random_transform(rng)
    planar.setTransformFromParentBodyNode(dart.math.Isometry3(p2))  # type: ignore[attr-defined]
    ours = Skeleton("s", [
        Body("a", Joint("screw", "screw", p_t, c_t, axes=[axis], pitch=0.37)),
        Body("b", Joint("t2", "translational2d", p2, plane="arbitrary",
                        axes=[[1.0, 0.2, 0.0], [0.0, 1.0, 0.5]]), parent=0)])
    q = rng.uniform(-2, 2, size=(5, 3))
    rot, pos = forward_transforms(ours, q)
    expected = _dart_poses(dskel, q)
    assert np.abs(expected[..., :3, :3] - rot).max() <= 1e-9
    assert np.abs(expected[..., :3, 3] - pos).max() <= 1e-9


def _reference(skeleton: Skeleton, q: np.ndarray) -> np.ndarray:
    """Plain 4×4 products, one frame at a time, with the matrix joint motions."""
    out = np.empty((len(q), len(skeleton.bodies), 4, 4))
    for f, frame in enumerate(q):
        for k, body in enumerate(skeleton.bodies):
            rot, pos = joint_motion(body.joint, frame[None, body.joint.dof_slice])
            motion = np.eye(4)
            if rot is not None:
                motion[:3, :3] = rot[0]
            if pos is not None:
                motion[:3, 3] = pos[0]
            parent = np.eye(4) if body.parent < 0 else out[f, body.parent]
            out[f, k] = (parent @ body.joint.parent_to_joint @ motion @
                         np.linalg.inv(body.joint.child_to_joint))
    return out


@settings(max_examples=60, deadline=None)
@given(skeletons(), st.integers(0, 2**31))
def test_fast_fk_equals_plain_matrix_products(skeleton: Skeleton, seed: int) -> None:
    q = np.random.default_rng(seed).uniform(-4, 4, size=(3, skeleton.dof_count))
    poses = forward(skeleton, q)
    assert poses.shape == (3, len(skeleton.bodies), 7)
    np.testing.assert_allclose(np.linalg.norm(poses[..., 3:], axis=-1), 1.0, atol=1e-12)
    assert (poses[..., 6] >= 0).all()
    np.testing.assert_allclose(poses_to_matrices(poses), _reference(skeleton, q), atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(skeletons())
def test_rest_poses_are_the_poses_at_zero(skeleton: Skeleton) -> None:
    rest = skeleton.rest_poses()
    np.testing.assert_allclose(rest, _reference(skeleton, np.zeros((1, skeleton.dof_count)))[0],
                               atol=1e-12)
    np.testing.assert_allclose(poses_to_matrices(forward(skeleton, np.zeros(skeleton.dof_count))),
                               rest, atol=1e-12)


def test_forward_transforms_of_one_frame_has_no_frame_axis() -> None:
    skeleton = Skeleton("s", [Body("a", Joint("j", "revolute", axes=np.array([[0.0, 0.0, 1.0]])))])
    rot, pos = forward_transforms(skeleton, [0.5])
    assert rot.shape == (1, 3, 3) and pos.shape == (1, 3)
    np.testing.assert_allclose(rot[0], Rotation.from_rotvec([0, 0, 0.5]).as_matrix(), atol=1e-15)
    rot, pos = forward_transforms(skeleton, [[0.5]])
    assert rot.shape == (1, 1, 3, 3) and pos.shape == (1, 1, 3)


def test_quaternion_matrix_and_axis_angle_helpers_match_scipy() -> None:
    rotations = Rotation.random(500, random_state=7)
    # exact half turns and the identity exercise every branch of Shepperd's method
    matrices = np.concatenate([rotations.as_matrix(), np.diag([1.0, -1, -1])[None],
                               np.diag([-1.0, 1, -1])[None], np.diag([-1.0, -1, 1])[None],
                               np.eye(3)[None]])
    expected = Rotation.from_matrix(matrices).as_quat(canonical=False)
    expected[expected[:, 3] < 0] *= -1
    got = quaternion.from_matrix(matrices.reshape(2, -1, 3, 3)).reshape(-1, 4)
    assert (got[:, 3] >= 0).all()
    np.testing.assert_allclose(np.abs(got @ expected.T).diagonal(), 1.0, atol=1e-12)
    np.testing.assert_allclose(quaternion.to_matrix(got), matrices, atol=1e-12)
    axes = np.random.default_rng(1).normal(size=(6, 3))
    angles = np.array([0.0, 0.5, -2.0, np.pi, 2 * np.pi, 20.0])
    unit = axes / np.linalg.norm(axes, axis=1, keepdims=True)
    np.testing.assert_allclose(quaternion.from_axis_angle(axes, angles),
                               Rotation.from_rotvec(unit * angles[:, None]).as_quat(), atol=1e-12)
    with pytest.raises(ValueError, match="zero axis"):
        quaternion.from_axis_angle([0.0, 0.0, 0.0], 1.0)


def test_root_pose_overrides_the_root_joint() -> None:
    rng = np.random.default_rng(9)
    root = Joint("root", "free", random_transform(rng), random_transform(rng))
    skeleton = Skeleton("s", [Body("a", root),
                              Body("b", Joint("j", "revolute", random_transform(rng),
                                              axes=[[0, 0, 1]]), parent=0)])
    q = rng.uniform(-1, 1, size=(4, 7))
    free = forward(skeleton, q)
    given_root = free[:, 0].copy()
    moved = forward(skeleton, np.c_[np.zeros((4, 6)), q[:, 6:]], root_pose=given_root)
    np.testing.assert_allclose(moved, free, atol=1e-12)


def test_shapes_and_errors() -> None:
    skeleton = Skeleton("s", [Body("a", Joint("j", "ball"))])
    assert forward(skeleton, [0.1, 0.2, 0.3]).shape == (1, 7)
    np.testing.assert_allclose(forward(skeleton, np.zeros(3)), [[0, 0, 0, 0, 0, 0, 1]])
    with pytest.raises(ValueError, match="3 coordinates"):
        forward(skeleton, np.zeros((2, 4)))
    tiny = forward(skeleton, [[1e-12, 0, 0]])[0, 0]
    np.testing.assert_allclose(tiny[3:], [5e-13, 0, 0, 1], atol=1e-18)
    empty = Skeleton("e", [])
    assert forward(empty, np.zeros((5, 0))).shape == (5, 0, 7)


def test_joint_rotations_drive_fk_through_a_character() -> None:
    """A PARC motion read without a character has joint rotations only: FK through the
    character's skeleton gives the same link poses as through its joint values."""
    character = corpus_file("parc", "character", "humanoid.xml")
    skeleton = mk.read(character)
    assert isinstance(skeleton, mk.Skeleton)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = mk.read(corpus_file("parc", "ms", "sfu.pkl"))
        labelled = mk.read(corpus_file("parc", "ms", "sfu.pkl"), character=character)
    assert "joints" not in bare.tracks and "joints" in labelled.tracks
    from_rotations = mk.kinematics.link_motion(skeleton, bare).tracks["links"].data
    from_joints = mk.kinematics.link_motion(skeleton, labelled).tracks["links"].data
    np.testing.assert_array_equal(from_rotations, from_joints)
    assert np.ptp(from_rotations[:, -1, :3], axis=0).max() > 0.1  # the limbs do move
