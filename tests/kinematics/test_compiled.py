"""The compiled FK kernel (``_fk_kernel.c``) against the NumPy path (``_fast.py``), the
readable statement of the same rule: equal to ``TOL`` on every corpus model and on random
skeletons; the pure path when the extension is absent; threads; peak memory.

Tolerance: positions and quaternions agree to ``TOL`` = 1e-12 (metres; unit quaternion
components, compared up to sign where w is near zero). Both paths round differently
(sincos against tan of the quarter angle, other product orders), which gives ~1e-15 per
body; 1e-12 leaves room for deep chains and long limbs without hiding a wrong term.
"""

from __future__ import annotations

import tracemalloc
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root, require_compiled
from fk_reference import skeletons
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.kinematics import _compiled, _engine, character_poses, forward, link_poses
from motionkit.model.character import Character
from motionkit.model.skeleton import Body, Joint, Skeleton
from motionkit.model.timeline import Timeline
from motionkit.model.track import Track

TOL = 1e-12
MODEL_GLOBS = ("dart/skel/**/*.skel", "dartenv/*.skel", "choreonoid/*.body", "choreonoid/body/*.body",
               "mimickit/*.xml", "containers/characters/*.xml", "containers/amass/*.xml",
               "parc/character/*.xml", "retarget/*.xml")
UNREADABLE = {"test_single_body.skel"}  # a deliberately broken file (test_kinematics skips it too)
CHARACTERS = ("parc/character/humanoid.xml", "mimickit/go2.xml", "containers/characters/g1.xml")


def _models() -> list[str]:
    root = corpus_root()
    return sorted({p.relative_to(root).as_posix() for pattern in MODEL_GLOBS
                   for p in root.glob(pattern) if p.name not in UNREADABLE})


MODELS = corpus_names(_models())


def _skeletons(relative: str) -> Iterator[Skeleton]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            loaded = mk.read(corpus_file(*relative.split("/")))
        except mk.MotionkitError as exc:
            pytest.fail(f"{relative} no longer reads: {exc}")
    if isinstance(loaded, mk.World):
        yield from loaded.skeletons
    elif isinstance(loaded, mk.Skeleton):
        yield loaded
    else:
        pytest.fail(f"{relative} is not a model")


def assert_same_poses(a: np.ndarray, b: np.ndarray) -> None:
    """Positions to TOL; quaternions to TOL up to sign (the sign of w ≈ 0 is arbitrary)."""
    assert a.shape == b.shape
    np.testing.assert_allclose(a[..., :3], b[..., :3], rtol=0, atol=TOL)
    apart = np.minimum(np.abs(a[..., 3:] - b[..., 3:]).max(-1), np.abs(a[..., 3:] + b[..., 3:]).max(-1))
    assert apart.max(initial=0.0) <= TOL


def both(skeleton: Skeleton, q: np.ndarray, root: np.ndarray | None = None,
         given_rotations: np.ndarray | None = None) -> np.ndarray:
    """The kernel's poses, checked equal to the NumPy path's."""
    fast = _engine.poses(skeleton, q, root, given_rotations, compiled=True)
    assert_same_poses(fast, _engine.poses(skeleton, q, root, given_rotations, compiled=False))
    return fast


def _sr1() -> Skeleton:
    loaded = mk.read(corpus_file("choreonoid", "SR1.body"))
    assert isinstance(loaded, Skeleton)
    return loaded


def random_q(skeleton: Skeleton, seed: int, frames: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -np.pi)
    hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, np.pi)
    return rng.uniform(lo, hi, size=(frames, skeleton.dof_count))


@pytest.fixture(autouse=True)
def _built() -> None:
    """The kernel's tests need it: built wherever a C compiler is (see require_compiled)."""
    require_compiled(_compiled.KERNEL is not None, "the compiled FK kernel")


def test_the_install_built_the_kernel() -> None:
    # setup.py builds it (optional, for machines without a compiler); here it must be there
    assert _compiled.KERNEL is not None


@pytest.mark.parametrize("relative", MODELS)
def test_kernel_equals_numpy_on_every_corpus_model(relative: str) -> None:
    for skeleton in _skeletons(relative):
        q = random_q(skeleton, 1, 64)
        both(skeleton, q)
        both(skeleton, np.zeros_like(q))
        if skeleton.bodies:
            root = np.random.default_rng(2).normal(size=(64, 7))
            both(skeleton, q, root)


def test_the_models_cover_every_family() -> None:
    families = {name.split("/")[0] for name in _models()}
    assert {"dart", "dartenv", "choreonoid", "mimickit", "containers", "parc", "retarget"} <= families


@pytest.mark.parametrize("relative", corpus_names(list(CHARACTERS)))
def test_kernel_equals_numpy_on_characters(relative: str, monkeypatch: pytest.MonkeyPatch) -> None:
    character = load_character(corpus_file(*relative.split("/")))
    rng = np.random.default_rng(4)
    joints = rng.normal(size=(3, 50, character.body_count - 1, 4))  # not unit: normalised
    root_pos, root_rot = rng.normal(size=(3, 50, 3)), rng.normal(size=(3, 50, 4))
    pos, rot = character_poses(character, root_pos, root_rot, joints)
    monkeypatch.setattr(_compiled, "KERNEL", None)
    want_pos, want_rot = character_poses(character, root_pos, root_rot, joints)
    assert_same_poses(np.concatenate([pos, rot], -1), np.concatenate([want_pos, want_rot], -1))


@settings(max_examples=150, deadline=None)
@given(skeletons(), st.integers(0, 2**31), st.sampled_from([1.0, 4.0, 30.0]))
def test_kernel_equals_numpy_on_random_skeletons(skeleton: Skeleton, seed: int,
                                                 spread: float) -> None:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-spread, spread, size=(5, skeleton.dof_count))
    q[0] = 0.0
    q[1, :: 2] *= 1e-9  # small rotation vectors: the exact-near-zero branch
    both(skeleton, q)
    both(skeleton, q, rng.normal(size=(5, 7)))
    given_rotations = rng.normal(size=(5, len(skeleton.bodies) - 1, 4))
    both(skeleton, q, rng.normal(size=(5, 7)), given_rotations)


def test_the_pure_path_serves_when_the_extension_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    skeleton = _sr1()
    q = random_q(skeleton, 5, 300)
    compiled = forward(skeleton, q)
    monkeypatch.setattr(_compiled, "KERNEL", None)
    calls: list[int] = []
    real = _engine._numpy_range
    monkeypatch.setattr(_engine, "_numpy_range", lambda *a: calls.append(1) or real(*a))
    assert_same_poses(forward(skeleton, q), compiled)
    assert calls  # the NumPy path did the work
    with pytest.raises(RuntimeError, match="not built"):
        _engine.poses(skeleton, q, compiled=True)



@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_threads_split_frames_without_changing_a_bit(threads: int) -> None:
    skeleton = _sr1()
    q = random_q(skeleton, 6, 1001)
    one = forward(skeleton, q, threads=1)
    np.testing.assert_array_equal(forward(skeleton, q, threads=threads), one)
    np.testing.assert_array_equal(
        _engine.poses(skeleton, q, threads=threads, compiled=False),
        _engine.poses(skeleton, q, threads=1, compiled=False))
    with pytest.raises(ValueError, match="at least 1"):
        forward(skeleton, q, threads=0)


def test_automatic_threads_grow_with_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_engine, "available_cpus", lambda: 8)
    assert _engine.thread_count(10_000, None) == 1
    assert _engine.thread_count(3 * _engine.FRAMES_PER_THREAD, None) == 3
    assert _engine.thread_count(100 * _engine.FRAMES_PER_THREAD, None) == 8
    assert _engine.thread_count(10, 4) == 4


def test_out_receives_the_poses() -> None:
    skeleton = _sr1()
    q = random_q(skeleton, 7, 20)
    out = np.full((20, len(skeleton.bodies), 7), np.nan)
    assert forward(skeleton, q, out=out) is out
    np.testing.assert_array_equal(out, forward(skeleton, q))
    with pytest.raises(ValueError, match="C-contiguous"):
        forward(skeleton, q, out=np.empty((20, len(skeleton.bodies), 7), dtype=np.float32))


def test_the_kernel_refuses_bad_plans_and_short_buffers() -> None:
    kernel = _compiled.KERNEL
    assert kernel is not None
    skeleton = _sr1()
    plan = _compiled.plan(skeleton)
    bodies, dofs = len(skeleton.bodies), skeleton.dof_count
    q, out = np.zeros((4, dofs)), np.empty((4, bodies, 7))
    with pytest.raises(ValueError, match="out"):
        kernel.run(plan.ints, plan.consts, bodies, q, dofs, dofs, None, None, out[:3], 0, 4)
    with pytest.raises(ValueError, match="q"):
        kernel.run(plan.ints, plan.consts, bodies, q[:3], dofs, dofs, None, None, out, 0, 4)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.run(plan.ints, plan.consts, bodies, q, dofs, dofs, None, None, out.T, 0, 4)
    bad = plan.ints.copy()
    bad[3, 0] = 5  # a parent after its child
    with pytest.raises(ValueError, match="bad plan row 3"):
        kernel.run(bad, plan.consts, bodies, q, dofs, dofs, None, None, out, 0, 4)
    bad = plan.ints.copy()
    bad[1, 2] = dofs  # a coordinate past the end
    with pytest.raises(ValueError, match="bad plan row 1"):
        kernel.run(bad, plan.consts, bodies, q, dofs, dofs, None, None, out, 0, 4)


@pytest.mark.parametrize("compiled", [True, False])
def test_peak_memory_stays_near_the_output(compiled: bool) -> None:
    """Every byte NumPy allocates is traced, so this is exact and repeatable: FK of 40,000
    frames holds at most 1.3 times its output (the kernel: the output alone; the NumPy
    path: the output and one chunk's working arrays)."""
    skeleton = _sr1()
    q = random_q(skeleton, 8, 40_000)
    _engine.poses(skeleton, q[:10], compiled=compiled)  # the plans are built outside
    tracemalloc.start()
    try:
        out = _engine.poses(skeleton, q, compiled=compiled, threads=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.3 * out.nbytes, peak / out.nbytes


def test_link_poses_write_in_place() -> None:
    skeleton = _sr1()
    q = random_q(skeleton, 9, 30)
    motion = mk.Motion(tracks={"joints": Track("joints", "value", q, Timeline.uniform(30.0, 30),
                                                  labels=skeleton.dof_names)})
    track = link_poses(skeleton, motion, chunk=7)
    np.testing.assert_array_equal(track.data, forward(skeleton, q))


def test_character_memory_is_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    character: Character = load_character(corpus_file("parc", "character", "humanoid.xml"))
    joints = np.tile([0.0, 0.0, 0.0, 1.0], (20_000, character.body_count - 1, 1))
    character_poses(character, np.zeros((1, 3)), [[0, 0, 0, 1.0]], joints[:1])
    tracemalloc.start()
    try:
        _pos, _ = character_poses(character, np.zeros((20_000, 3)), np.tile([0, 0, 0, 1.0], (20_000, 1)),
                                 joints)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    output = 20_000 * character.body_count * 7 * 8
    assert peak <= 1.3 * output, peak / output


def test_the_kernels_half_angle_sines_are_the_libraries() -> None:
    """The kernel's own sin and cos of half angles (a polynomial after reduction by pi/2)
    against NumPy's, from tiny angles through every quadrant to the C library's range."""
    axis = np.array([[0.0, 0.0, 1.0]])
    skeleton = Skeleton("s", [Body("a", Joint("j", "revolute", axes=axis))])
    rng = np.random.default_rng(10)
    angles = np.concatenate([
        [0.0, -0.0, 1e-300, 5e-324, np.pi, -np.pi, 2 * np.pi, 3 * np.pi, 1e5, 2e5, 2.5e5, 1e300],
        np.arange(-40, 41) * (np.pi / 2), rng.uniform(-7, 7, 2000), rng.uniform(-2e5, 2e5, 2000),
        rng.uniform(-1e9, 1e9, 200)])
    got = _engine.poses(skeleton, angles[:, None], compiled=True)[:, 0, 3:]
    half = 0.5 * angles
    sign = np.copysign(1.0, np.cos(half) + 0.0)
    np.testing.assert_allclose(got[:, 2], sign * np.sin(half), rtol=0, atol=4e-16)
    np.testing.assert_allclose(got[:, 3], sign * np.cos(half), rtol=0, atol=4e-16)
    nan = _engine.poses(skeleton, np.array([[np.nan], [np.inf]]), compiled=True)
    assert np.isnan(nan[:, 0, 3:]).all()
