"""MJCF export: MuJoCo's ``mj_kinematics`` gives every body the pose motionkit's FK gives
(≤ 1e-9) at random configurations, for every corpus model and every joint type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from export_models import (
    CORPUS,
    corpus_ids,
    every_joint,
    random_q,
    skeletons,
    two_skeleton_world,
    write_or_refuse,
)
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import require_peer
from motionkit.kinematics import forward, poses_to_matrices
from motionkit.model.skeleton import Skeleton

mujoco = require_peer("mujoco")


def _wxyz(rotation: np.ndarray) -> list[float]:
    x, y, z, w = Rotation.from_matrix(rotation).as_quat()
    return [w, x, y, z]


def _qpos(model: object, skeleton: Skeleton, q: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """MuJoCo's qpos for neutral coordinates ``q`` (how the writer maps joints)."""
    qpos = np.array(model.qpos0)  # type: ignore[attr-defined]

    def put(name: str, values: list[float] | np.ndarray) -> None:
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        start = model.jnt_qposadr[index]  # type: ignore[attr-defined]
        qpos[start:start + len(values)] = values

    for number, body in enumerate(skeleton.bodies):
        joint = body.joint
        values = q[joint.dof_slice]
        tilt = joint.child_to_joint[:3, :3]
        if joint.type == "free" and body.parent < 0:
            put(joint.name, [*poses[number, :3, 3], *_wxyz(poses[number, :3, :3])])
        elif joint.type in ("ball", "free"):
            rotation = Rotation.from_rotvec(values[:3]).as_matrix()
            if joint.type == "free":
                for dof, value in zip(joint.dofs[3:], values[3:], strict=True):
                    put(dof.name, [value])
            put(joint.name, _wxyz(tilt @ rotation @ tilt.T))
        elif joint.dof_count == 1:
            put(joint.name, values)
        else:
            for dof, value in zip(joint.dofs, values, strict=True):
                put(dof.name, [value])
    return qpos


def _error(skeleton: Skeleton, path: Path, seed: int = 0) -> float:
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    q = random_q(skeleton, seed)
    poses = poses_to_matrices(forward(skeleton, q))
    data.qpos[:] = _qpos(model, skeleton, q, poses)
    mujoco.mj_kinematics(model, data)
    worst = 0.0
    for number, body in enumerate(skeleton.bodies):
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.name)
        worst = max(worst, float(np.abs(data.xmat[index].reshape(3, 3)
                                        - poses[number, :3, :3]).max()),
                    float(np.abs(data.xpos[index] - poses[number, :3, 3]).max()))
    return worst


def test_every_joint_type_matches_mujoco(tmp_path: Path) -> None:
    skeleton = every_joint()
    path = tmp_path / "every.xml"
    mk.write(path, skeleton)
    for seed in range(3):
        assert _error(skeleton, path, seed) <= 1e-9
    model = mujoco.MjModel.from_xml_path(str(path))
    hinge = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "hinge_joint")
    assert model.jnt_range[hinge].tolist() == [-1.5, 2.0] and model.jnt_limited[hinge]
    assert model.dof_damping[model.jnt_dofadr[hinge]] == 0.25
    assert model.njnt == 1 + 1 + 1 + 2 + 1 + 3 + 3 + 3 + 4  # free, ..., inner free = 3 slides + ball
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "slider_link")
    assert model.body_mass[body] == 3.0


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", CORPUS, ids=corpus_ids())
def test_corpus_models_match_mujoco(relative: str, tmp_path: Path) -> None:
    for number, skeleton in enumerate(skeletons(relative)):
        path = tmp_path / f"model{number}.xml"
        if write_or_refuse(path, skeleton):
            assert _error(skeleton, path) <= 1e-9


def test_a_whole_world_is_written(tmp_path: Path) -> None:
    world = two_skeleton_world()
    path = tmp_path / "w.xml"
    mk.write(path, world)
    for skeleton in world.skeletons:
        assert _error(skeleton, path) <= 1e-9


def test_what_mujoco_cannot_hold_is_refused_by_name(tmp_path: Path) -> None:
    skeleton = every_joint()
    skeleton.bodies[2].joint.type = "screw"
    skeleton.bodies[3].inertia.mass = 0.0
    skeleton.bodies[4].shapes.append(mk.model.skeleton.Shape("cone", {"radius": 1, "height": 1}))
    skeleton.joint("hinge_joint").dofs[0].position = 0.5
    with pytest.raises(mk.ConversionError) as caught:
        mk.write(tmp_path / "x.xml", skeleton)
    text = str(caught.value)
    assert "screw joints" in text and "'cardan_link'" in text and "cone shapes" in text
    assert "initial positions (left out) on 'hinge_joint'" in text
    with pytest.warns(mk.MotionkitWarning):
        mk.write(tmp_path / "x.xml", skeleton, lossy=True)
    mujoco.MjModel.from_xml_path(str(tmp_path / "x.xml"))


@pytest.mark.corpus
def test_a_hinge_robot_reads_back_through_the_character_reader(tmp_path: Path) -> None:
    skeleton = skeletons("choreonoid/SR1.body")[0]
    path = tmp_path / "SR1.xml"
    with pytest.warns(mk.MotionkitWarning, match="devices"):
        mk.write(path, skeleton, lossy=True)
    back = mk.read(path)  # .xml reads as a PARC character: hinges and fixed joints only
    assert isinstance(back, Skeleton)
    assert [b.name for b in back.bodies] == [b.name for b in skeleton.bodies]
    q = random_q(skeleton)
    order = [back.joint(j.name).dof_offset for j in skeleton.joints if j.dof_count == 1]
    coords = np.zeros(back.dof_count)
    coords[order] = [q[j.dof_offset] for j in skeleton.joints if j.dof_count == 1]
    mine = poses_to_matrices(forward(skeleton, q))
    theirs = poses_to_matrices(forward(back, coords))
    relative = [np.linalg.inv(p[0]) @ p for p in (mine, theirs)]
    assert np.abs(relative[0] - relative[1]).max() <= 1e-9
