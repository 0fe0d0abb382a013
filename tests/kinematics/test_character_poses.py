"""A character's FK (``kinematics.character_poses``): PARC's rule, by the one FK engine."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import corpus_file
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.kinematics import character_poses
from motionkit.model.character import Character
from motionkit.spatial import quaternion as quat


@pytest.fixture
def humanoid() -> Character:
    return load_character(corpus_file("parc", "character", "humanoid.xml"))


def _by_the_rule(c: Character, root_pos: np.ndarray, root_rot: np.ndarray,
                 joint_rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pos_j = pos_p + rot_p · local_pos_j; rot_j = rot_p ⊗ local_rot_j ⊗ joint_rot_j."""
    pos, rot = [root_pos], [quat.normalize(root_rot)]
    for body in range(1, c.body_count):
        parent = int(c.parents[body])
        pos.append(pos[parent] + quat.rotate(rot[parent], c.local_pos[body]))
        local = quat.multiply(c.local_rot[body], quat.normalize(joint_rot[..., body - 1, :]))
        rot.append(quat.multiply(rot[parent], local))
    return np.stack(pos, -2), quat.positive_w(np.stack(rot, -2))


def test_poses_follow_parcs_rule(humanoid: Character) -> None:
    rng = np.random.default_rng(3)
    joints = rng.normal(size=(2, 7, humanoid.body_count - 1, 4))  # leading axes kept
    root_rot, root_pos = rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
    pos, rot = character_poses(humanoid, root_pos, root_rot, joints)
    want_pos, want_rot = _by_the_rule(humanoid, root_pos, root_rot, joints)
    np.testing.assert_allclose(pos, want_pos, atol=1e-12)
    np.testing.assert_allclose(rot, want_rot, atol=1e-12)
    assert (rot[..., 3] >= 0).all()


def test_edits_to_a_character_are_seen_by_the_next_call(humanoid: Character) -> None:
    still = np.tile([0, 0, 0, 1.0], (1, humanoid.body_count - 1, 1))
    before, _ = character_poses(humanoid, np.zeros((1, 3)), [[0, 0, 0, 1.0]], still)
    humanoid.local_pos[1] += [0, 0, 1]
    after, _ = character_poses(humanoid, np.zeros((1, 3)), [[0, 0, 0, 1.0]], still)
    np.testing.assert_allclose(after[0, 1] - before[0, 1], [0, 0, 1])


def test_no_frames_give_no_poses(humanoid: Character) -> None:
    pos, rot = character_poses(humanoid, np.zeros((0, 3)), np.zeros((0, 4)),
                               np.zeros((0, humanoid.body_count - 1, 4)))
    assert pos.shape == (0, humanoid.body_count, 3) and rot.shape == (0, humanoid.body_count, 4)


def test_the_skeleton_follows_edited_limits(humanoid: Character) -> None:
    hinge = humanoid.kinds.index("hinge")
    before = humanoid.skeleton
    humanoid.limits[hinge, 0] = (-0.25, 0.5)
    assert humanoid.skeleton is not before
    assert humanoid.skeleton.bodies[hinge].joint.dofs[0].upper == 0.5


def test_a_zero_quaternion_is_refused_on_both_paths() -> None:
    """Both engine paths would give NaN for a zero joint or root quaternion (the compiled one
    silently): refused before either runs."""
    character = load_character(corpus_file("parc", "character", "humanoid.xml"))
    joints = np.tile([0.0, 0.0, 0.0, 1.0], (2, character.body_count - 1, 1))
    root_rot = np.tile([0.0, 0.0, 0.0, 1.0], (2, 1))
    character_poses(character, np.zeros((2, 3)), root_rot, joints)
    bad_joints = joints.copy()
    bad_joints[1, 3] = 0.0
    bad_root = root_rot.copy()
    bad_root[0] = 0.0
    for root, given in ((root_rot, bad_joints), (bad_root, joints)):
        with pytest.raises(ValueError, match="zero quaternion"):
            character_poses(character, np.zeros((2, 3)), root, given)
