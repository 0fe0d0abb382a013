"""The IK's parts on their own: the SE(3) log and its Jacobian against finite differences,
the robot's poses and Jacobians against MuJoCo, the box-bounded solve against its optimality
conditions."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import motionkit as mk
from conftest import corpus_file, require_peer
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


def test_poses_and_jacobians_equal_mujoco() -> None:
    mujoco = require_peer("mujoco")
    path = corpus_file("retarget", "g1_mocap_29dof_nomesh.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = Robot.of(mk.read(path))
    model = mujoco.MjModel.from_xml_path(str(path))  # type: ignore[attr-defined]
    data = mujoco.MjData(model)  # type: ignore[attr-defined]
    names = [model.body(i).name for i in range(model.nbody)]
    rng = np.random.default_rng(7)
    for _ in range(5):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        state = State(rng.normal(size=3), exp3(rng.normal(size=3)),
                      rng.uniform(robot.lower, robot.upper))
        data.qpos[:3], data.qpos[7:] = state.root_pos, state.q
        mujoco.mju_mat2Quat(data.qpos[3:7], state.root_rot.ravel())  # type: ignore[attr-defined]
        mujoco.mj_kinematics(model, data)  # type: ignore[attr-defined]
        mujoco.mj_comPos(model, data)  # type: ignore[attr-defined]
        bodies, frames = robot.poses(state)
        for index, name in enumerate(robot.names):
            k = names.index(name)
            assert np.abs(bodies[index][:3, 3] - data.xpos[k]).max() < 1e-12
            assert np.abs(bodies[index][:3, :3] - data.xmat[k].reshape(3, 3)).max() < 1e-12
            linear, angular = np.zeros((3, model.nv)), np.zeros((3, model.nv))
            mujoco.mj_jacBody(model, data, linear, angular, k)  # type: ignore[attr-defined]
            ours = robot.jacobian(index, bodies, frames)
            assert np.abs(ours - np.vstack([linear, angular])).max() < 1e-9


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
