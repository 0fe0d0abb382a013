"""The IK's parts on their own: the SE(3) log and its Jacobian against finite differences,
the robot's poses and Jacobians against MuJoCo, the box-bounded solve against its optimality
conditions."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.mujoco import mjcf
from motionkit.model.skeleton import Skeleton
from motionkit.retarget.ik import box_qp
from motionkit.retarget.lie import exp3, jlog6, log6
from motionkit.retarget.robot import Robot, State

finite = st.floats(-3.0, 3.0, allow_nan=False)


def _exp6(xi: np.ndarray) -> np.ndarray:
    """SE(3) exp by the matrix series (independent of the closed forms under test)."""
    twist = np.zeros((4, 4))
    twist[:3, :3] = np.array([[0, -xi[5], xi[4]], [xi[5], 0, -xi[3]], [-xi[4], xi[3], 0]])
    twist[:3, 3] = xi[:3]
    out, term = np.eye(4), np.eye(4)
    for k in range(1, 40):
        term = term @ twist / k
        out = out + term
    return out


@given(arrays(np.float64, 6, elements=finite), st.sampled_from([1.0, 1e-3, 1e-7, 0.0]))
@settings(max_examples=60, deadline=None)
def test_log6_inverts_exp_and_jlog6_is_its_derivative(xi: np.ndarray, spin: float) -> None:
    xi = xi.copy()
    xi[3:] *= spin
    if np.linalg.norm(xi[3:]) > 3.0:  # inside (−π, π): the log is unique there
        xi[3:] *= 3.0 / np.linalg.norm(xi[3:])
    pose = _exp6(xi)
    assert np.abs(log6(pose) - xi).max() < 1e-9
    numeric = np.empty((6, 6))
    for k in range(6):
        delta = np.zeros(6)
        delta[k] = 1e-6
        numeric[:, k] = (log6(pose @ _exp6(delta)) - log6(pose @ _exp6(-delta))) / 2e-6
    assert np.abs(jlog6(pose) - numeric).max() < 1e-7


def _without_meshes(text: str) -> str:
    """The corpus ships no meshes: drop mesh assets and geoms, and the PARC humanoid's floor
    (its material is not defined); the kinematics stay."""
    text = re.sub(r"<mesh [^>]*/>", "", text)
    text = re.sub(r"<geom[^>]*(type=\"mesh\"|mesh=)[^>]*/>", "", text)
    return re.sub(r'<geom name="floor"[^>]*/>', "", text)


def _models(tmp_path: Path) -> list[tuple[str, Skeleton, str]]:
    """(name, skeleton, MJCF text) of every corpus robot: G1, the PARC humanoid, Go2, and
    SR1 through motionkit's MJCF export."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # floor geoms of <worldbody> belong to no body
        for parts in (("retarget", "g1_mocap_29dof_nomesh.xml"), ("parc", "character",
                      "humanoid.xml"), ("mimickit", "go2.xml")):
            path = corpus_file(*parts)
            out.append((path.name, mjcf.read(path), _without_meshes(path.read_text())))
        sr1 = mk.read(corpus_file("choreonoid", "SR1.body"))
        exported = tmp_path / "SR1.xml"
        mk.write(exported, sr1, lossy=True)
        out.append(("SR1.body", sr1, exported.read_text()))
    return out


def test_poses_and_jacobians_equal_mujoco_on_every_corpus_robot(tmp_path: Path) -> None:
    mujoco = require_peer("mujoco")
    for name, skeleton, text in _models(tmp_path):
        robot = Robot.of(skeleton)
        model = mujoco.MjModel.from_xml_string(text)  # type: ignore[attr-defined]
        data = mujoco.MjData(model)  # type: ignore[attr-defined]
        joints = [model.joint(i).name for i in range(model.njnt)]
        qpos = [model.jnt_qposadr[joints.index(n)] for n in robot.joint_names]
        columns = [*range(6 if robot.floating else 0),
                   *(model.jnt_dofadr[joints.index(n)] for n in robot.joint_names)]
        bodies = [model.body(i).name for i in range(model.nbody)]
        rng = np.random.default_rng(7)
        for _ in range(3):
            low = np.where(np.isfinite(robot.lower), robot.lower, -1.0)
            high = np.where(np.isfinite(robot.upper), robot.upper, 1.0)
            state = State(rng.normal(size=3), exp3(rng.normal(size=3)), rng.uniform(low, high))
            if robot.floating:
                data.qpos[:3] = state.root_pos
                mujoco.mju_mat2Quat(data.qpos[3:7], state.root_rot.ravel())  # type: ignore[attr-defined]
            data.qpos[qpos] = state.q
            mujoco.mj_kinematics(model, data)  # type: ignore[attr-defined]
            mujoco.mj_comPos(model, data)  # type: ignore[attr-defined]
            poses = robot.poses(state)
            ours = robot.jacobians(list(range(len(robot.names))), poses)
            for index, body in enumerate(robot.names):
                k = bodies.index(body)
                assert np.abs(poses.bodies[index][:3, 3] - data.xpos[k]).max() < 1e-9, name
                linear, angular = np.zeros((3, model.nv)), np.zeros((3, model.nv))
                mujoco.mj_jacBody(model, data, linear, angular, k)  # type: ignore[attr-defined]
                theirs = np.vstack([linear, angular])[:, columns]
                assert np.abs(ours[index] - theirs).max() < 1e-9, (name, body)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=80, deadline=None)
def test_box_qp_meets_the_optimality_conditions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 12))
    root = rng.normal(size=(size, size))
    hessian = root @ root.T + 0.1 * np.eye(size)
    gradient = rng.normal(size=size) * 5
    low, high = -rng.uniform(0, 1, size), rng.uniform(0, 1, size)
    low[rng.uniform(size=size) < 0.2] = -np.inf
    x = box_qp(hessian, gradient, low, high)
    assert np.all(x >= low - 1e-12) and np.all(x <= high + 1e-12)
    pull = hessian @ x + gradient  # zero where free, ≥ 0 at a lower bound, ≤ 0 at an upper
    at_low, at_high = np.isclose(x, low, atol=1e-12), np.isclose(x, high, atol=1e-12)
    free = ~(at_low | at_high)
    assert np.abs(pull[free]).max(initial=0) < 1e-8
    assert np.all(pull[at_low] > -1e-8) and np.all(pull[at_high] < 1e-8)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_box_qp_with_zero_outside_the_box(seed: int) -> None:
    """A joint outside its range (a rest angle of 0 below a range of [-2.7, -0.8]) gives a
    box that excludes 0: the answer is still inside it and optimal."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 10))
    root = rng.normal(size=(size, size))
    hessian = root @ root.T + 0.1 * np.eye(size)
    gradient = rng.normal(size=size) * 5
    low = rng.uniform(-1, 1, size)
    high = low + rng.uniform(0.01, 1, size)
    x = box_qp(hessian, gradient, low, high)
    assert np.all(x >= low - 1e-12) and np.all(x <= high + 1e-12)
    pull = hessian @ x + gradient
    at_low, at_high = np.isclose(x, low, atol=1e-12), np.isclose(x, high, atol=1e-12)
    free = ~(at_low | at_high)
    assert np.abs(pull[free]).max(initial=0) < 1e-8
    assert np.all(pull[at_low] > -1e-8) and np.all(pull[at_high] < 1e-8)
