"""The compiled checks (``quality/_check_kernel.c``) against the NumPy path, their oracle:
the same verdicts, first and worst frames, details and contact labels; the same series
to 1e-12 (m, m/s, rad/s: relative to the value above 1), bit-equal where the arithmetic
is the same (origin heights, the terrain's cells, ProtoMotions' per-axis speeds of
origins). On the corpus clips with and without their planted defects, on random poses
and shapes of the corpus models (quaternions not of unit length, frames that are not a
number) and on random terrains with points off their edges and on their cells' rims;
the feet's planted frames and sole moves (foot skating) likewise."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file, require_compiled
from motionkit.model.skeleton import Body, Joint, Shape, Skeleton
from motionkit.model.terrain import Terrain
from motionkit.quality import CheckReport, _compiled, check
from motionkit.quality.ground import Ground
from motionkit.quality.presets import DEFAULT, PROTOMOTIONS, Preset
from quality.clips import CLIPS, clip, with_defect

rules = importlib.import_module("motionkit.quality.check")  # the module (``check`` is the function)
T = TypeVar("T")
KERNEL = _compiled.KERNEL
TOLERANCE = 1e-12
VARIANTS = ("original", "sunk_frame_10cm", "root_spike_20mps", "float_1s_0p3m", "foot_slide_0p5m")


@pytest.fixture(autouse=True)
def built() -> Iterator[None]:
    require_compiled(KERNEL is not None, "motionkit.quality._check_kernel")
    yield
    _compiled.KERNEL = KERNEL


def both(run: Callable[[], T]) -> tuple[T, T]:
    """``run()`` on the compiled path, then on the NumPy path."""
    _compiled.KERNEL = KERNEL
    try:
        compiled = run()
        _compiled.KERNEL = None
        numpy = run()
    finally:
        _compiled.KERNEL = KERNEL
    return compiled, numpy


def close(a: np.ndarray, b: np.ndarray) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b))
    known = ~np.isnan(a)
    assert np.allclose(a[known], b[known], rtol=TOLERANCE, atol=TOLERANCE)


def alike(a: object, b: object) -> bool:
    """Equal, numbers to the tolerance (NaN and None as themselves)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(alike(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return (np.isnan(a) and np.isnan(b)) or bool(np.isclose(a, b, rtol=TOLERANCE,
                                                                  atol=TOLERANCE))
    return a == b


def same_report(a: CheckReport, b: CheckReport) -> None:
    assert a.verdict == b.verdict and a.failed == b.failed
    for x, y in zip(a.results, b.results, strict=True):
        assert (x.name, x.passed, x.first_frame, x.worst_frame) == (
            y.name, y.passed, y.first_frame, y.worst_frame), x.name
        close(np.array([x.value]), np.array([y.value]))
        if x.series is not None:
            assert y.series is not None
            close(x.series, y.series)
            assert np.array_equal(x.failing, y.failing), x.name
        assert alike(x.details, y.details), (x.name, x.details, y.details)
        assert x.note == y.note
    assert np.array_equal(a.contacts, b.contacts)


CASES = [(name, variant) for name in CLIPS for variant in VARIANTS
         if name in ("humanoid_platform05", "g1_kimodo_walk") or variant == "original"]


@pytest.mark.parametrize(("name", "variant"), CASES)
@pytest.mark.parametrize("preset", ["default", "protomotions"])
def test_the_compiled_checks_give_the_numpy_report_on_the_corpus(name: str, variant: str,
                                                                 preset: str) -> None:
    motion, skeleton = clip(name)
    broken = with_defect(motion, skeleton, name, variant)
    for ground in ((None, 0.03) if preset == "protomotions" else (None, "auto", 0.0)):
        compiled, numpy = both(lambda g=ground: check(broken, skeleton, preset=preset, ground=g))
        same_report(compiled, numpy)


@pytest.mark.parametrize("preset", ["default", "protomotions"])
def test_a_frame_that_is_not_a_number_fails_every_check_on_both_paths(preset: str) -> None:
    motion, skeleton = clip("parc_teaser_717")
    for column in (0, 2, 4):  # x (no terrain cell under it), z, a quaternion component
        root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
        root[42, column] = np.nan  # a frame ProtoMotions' stride of 3 checks too
        tracks = dict(motion.tracks)
        tracks["root"] = motion.tracks["root"].with_data(root)
        broken = mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            compiled, numpy = both(lambda b=broken: check(b, skeleton, preset=preset))
        same_report(compiled, numpy)
        for name in ("below_ground", "body_speed", "joint_speed", "floating", "self_penetration"):
            if preset == "protomotions" and column == 0 and name in ("below_ground", "floating"):
                continue  # ProtoMotions' heights are the origins' z alone, which is a number
            if column != 4 and name == "joint_speed":
                continue  # a root that only moves turns no joint
            result = compiled.result(name)
            assert not result.passed and result.failing is not None and result.failing[42], (
                column, name)


def _model(name: str) -> mk.Skeleton:
    return clip(name)[1]


@st.composite
def poses(draw: st.DrawFn, bodies: int) -> np.ndarray:
    """Random body poses: positions within 2 m, quaternions of any length in [0.5, 2]
    (never zero), some frames or values not a number."""
    frames = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    out = np.empty((frames, bodies, 7))
    out[..., :3] = rng.uniform(-2.0, 2.0, (frames, bodies, 3))
    turn = rng.normal(size=(frames, bodies, 4))
    turn /= np.linalg.norm(turn, axis=-1, keepdims=True)
    out[..., 3:] = turn * rng.uniform(0.5, 2.0, (frames, bodies, 1))
    if draw(st.booleans()):
        out[rng.integers(frames), rng.integers(bodies), rng.integers(7)] = np.nan
    return out


@st.composite
def terrains(draw: st.DrawFn) -> Terrain | None:
    if draw(st.booleans()):
        return None
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    dx = draw(st.sampled_from([0.25, 0.5, 0.1, 1.0]))
    origin = rng.uniform(-1.5, 1.5, 2).round(2)
    return Terrain(rng.uniform(-0.5, 0.5, shape), origin.astype(np.float32), dx,
                   draw(st.sampled_from([None, 0.25, 0.75])))


MODELS = ["parc_sfu", "g1_walk", "g1_kimodo_walk"]


def stamps(data: st.DataObject, frames: int) -> np.ndarray:
    """Times of ``frames`` frames, some steps zero or backwards (their speeds are NaN)."""
    steps = data.draw(st.lists(st.sampled_from([1 / 30, 1 / 60, 0.0, -0.01]),
                               min_size=frames - 1, max_size=frames - 1))
    return np.cumsum(np.r_[0.0, steps])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.data(), terrains(), st.sampled_from([DEFAULT, PROTOMOTIONS]),
       st.floats(-0.3, 0.3))
def test_the_compiled_measures_are_the_numpy_ones_on_random_poses(
        name: str, data: st.DataObject, terrain: Terrain | None, preset: Preset,
        height: float) -> None:
    motion, skeleton = clip(name)
    drawn = data.draw(poses(len(skeleton.bodies)))
    times = stamps(data, len(drawn))
    ground = Ground(height, terrain, "test")
    feet = list(rules._feet(rules._Model(skeleton), None))

    def measures() -> tuple[np.ndarray, ...]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            c = rules._Clip(motion, skeleton, drawn, times, ground, preset, feet)
            soles = [part for foot in feet for part in rules._soles_on_ground(c, foot)]
            return (c.lowest, c.origin_low, c.body_pairs, c.joint_pairs, c.contacts, *soles)

    compiled, numpy = both(measures)
    for a, b in zip(compiled, numpy, strict=True):
        close(a, b)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.data(), st.sampled_from([DEFAULT, PROTOMOTIONS]))
def test_the_compiled_gaps_give_the_numpy_self_penetration_on_random_poses(
        name: str, data: st.DataObject, preset: Preset) -> None:
    motion, skeleton = clip(name)
    drawn = data.draw(poses(len(skeleton.bodies)))
    # near poses too: each body a little off the rest pose, so that shapes touch
    rest = skeleton.rest_poses()
    near = np.tile(np.concatenate([rest[:, :3, 3], mk.spatial.quaternion.from_matrix(
        rest[:, :3, :3])], axis=-1), (len(drawn), 1, 1))
    near[..., :3] += 0.05 * np.tanh(drawn[..., :3])
    near[..., 3:] += 0.3 * np.tanh(drawn[..., 3:])
    times = np.arange(len(drawn)) / 30.0
    for frames in (drawn, near):
        c = rules._Clip(motion, skeleton, frames, times, Ground(), preset,
                        list(rules._feet(rules._Model(skeleton), None)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            compiled, numpy = both(lambda c=c: rules._self_penetration(c))
        assert compiled.passed == numpy.passed
        assert compiled.series is not None and numpy.series is not None
        close(compiled.series, numpy.series)
        assert compiled.details["worst_pair"] == numpy.details["worst_pair"]
        gaps = [r.details["min_gap_m"] for r in (compiled, numpy)]
        close(np.array([np.nan if g is None else g for g in gaps[:1]], dtype=float),
              np.array([np.nan if g is None else g for g in gaps[1:]], dtype=float))


@st.composite
def models(draw: st.DrawFn) -> Skeleton:
    """A random model: 1-6 bodies (a free root, then ball joints on earlier bodies, a
    random offset each), 0-3 primitives on each of every kind, turned and moved in their
    body, marked as collision shapes or not."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bodies: list[Body] = []
    for index in range(draw(st.integers(1, 6))):
        shapes = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["sphere", "capsule", "cylinder", "box"]))
            transform = np.eye(4)
            transform[:3, :3] = mk.spatial.quaternion.to_matrix(rng.normal(size=4))
            transform[:3, 3] = rng.uniform(-0.2, 0.2, 3)
            params: dict[str, object] = (
                {"size": rng.uniform(0.02, 0.4, 3)} if kind == "box" else
                {"radius": float(rng.uniform(0.01, 0.2)), "height": float(rng.uniform(0, 0.5))})
            shapes.append(Shape(kind, params, transform,  # type: ignore[arg-type]
                                role=draw(st.sampled_from(["collision", "visual"]))))
        offset = np.eye(4)
        offset[:3, 3] = rng.uniform(-0.5, 0.5, 3)
        joint = Joint(f"j{index}", "free" if index == 0 else "ball", parent_to_joint=offset)
        bodies.append(Body(f"b{index}", joint, parent=-1 if index == 0 else
                           draw(st.integers(0, index - 1)), shapes=shapes))
    return Skeleton("random", bodies)


@settings(max_examples=60, deadline=None)
@given(models(), st.data(), terrains(), st.sampled_from([DEFAULT, PROTOMOTIONS]))
def test_both_paths_agree_on_random_models(skeleton: Skeleton, data: st.DataObject,
                                           terrain: Terrain | None, preset: Preset) -> None:
    drawn = data.draw(poses(len(skeleton.bodies)))
    times = stamps(data, len(drawn))
    motion = mk.Motion({}, skeleton, None, {})
    ground = Ground(0.0, terrain, "test")
    feet = list(rules._feet(rules._Model(skeleton), None))

    def measures() -> tuple[object, ...]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            c = rules._Clip(motion, skeleton, drawn, times, ground, preset, feet)
            soles = [part for foot in feet for part in rules._soles_on_ground(c, foot)]
            penetration = rules._self_penetration(c)
            return (c.lowest, c.origin_low, c.body_pairs, c.joint_pairs, c.contacts, *soles,
                    penetration.series, penetration.passed, penetration.details)

    compiled, numpy = both(measures)
    for a, b in zip(compiled, numpy, strict=True):
        if isinstance(a, np.ndarray):
            close(a, b)  # type: ignore[arg-type]
        else:
            assert alike(a, b), (a, b)


def test_the_terrain_cell_is_numpys_on_rims_and_off_the_edges() -> None:
    terrain = Terrain(np.arange(12.0).reshape(3, 4), np.array([0.0, 0.0]), 0.5)
    # rims of cells (half a cell: np.round rounds half to even), off every edge, far off,
    # not finite
    x = np.array([0.25, 0.75, 1.25, -0.25, -9.0, 1e30, -1e30, 0.5, np.inf, np.nan, 0.0])
    y = np.array([0.25, 1.25, 0.75, 2.0, 3e9, -1e30, 7.0, -np.inf, 0.0, 0.0, np.nan])
    poses = np.zeros((len(x), 1, 7))
    poses[:, 0, 0], poses[:, 0, 1], poses[:, 0, 6] = x, y, 1.0
    ground = Ground(0.1, terrain, "test")
    assert KERNEL is not None
    out = _compiled.frame_checks(KERNEL, poses, np.array([-1]), _compiled.origin_table(1), ground,
                                 np.full(len(x) - 1, 1 / 30), largest=False, fps=30.0,
                                 contact_speed=0.15, contact_height=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = -ground.under(poses[:, 0, :2])
    assert np.array_equal(out.lowest, expected, equal_nan=True)
    assert np.isnan(out.lowest[-4:]).all() and np.isfinite(out.lowest[:-4]).all()  # inf, NaN
    assert out.lowest[0] == -0.1 and out.lowest[1] == -(0.1 + 10.0)  # cells (0, 0), (2, 2)
    assert out.lowest[4] == -(0.1 + 3.0) and out.lowest[5] == -(0.1 + 8.0)  # edge cells


def test_the_kernel_refuses_what_does_not_fit() -> None:
    kernel = KERNEL
    assert kernel is not None
    poses = np.zeros((4, 2, 7))
    poses[..., 6] = 1.0
    table = _compiled.origin_table(2)
    args = dict(largest=False, fps=30.0, contact_speed=0.15, contact_height=0.1)
    with pytest.raises(ValueError):  # one parent short
        _compiled.frame_checks(kernel, poses, np.array([-1]), table, Ground(), np.ones(3), **args)
    with pytest.raises(ValueError):  # a shape on a body the model does not have
        bad = _compiled.Table(np.array([[5, 4]], dtype=np.int32), np.zeros((1, 18)))
        _compiled.frame_checks(kernel, poses, np.array([-1, 0]), bad, Ground(), np.ones(3), **args)
    with pytest.raises(ValueError):  # a parent after its child
        _compiled.frame_checks(kernel, poses, np.array([1, -1]), table, Ground(), np.ones(3), **args)
    with pytest.raises(ValueError):  # more frames than the buffer holds
        kernel.frames(poses, 5, 2, np.array([-1, 0], dtype=np.int32), table.ints, table.doubles,
                      2, 0.0, None, 1, 1, 0.0, 0.0, 1.0, 1.0, np.ones(4), False, 30.0, 0.1, 0.1,
                      np.empty(5), None, None, None, None)
    with pytest.raises(ValueError):  # a pair of a shape that is not there
        _compiled.gaps(kernel, poses, table, np.array([[0, 2]]), 1, 0.1)
    with pytest.raises(ValueError):  # checked frames beyond the poses
        kernel.gaps(poses, 4, 2, table.ints, table.doubles, 2, np.zeros((1, 2), dtype=np.int32),
                    1, 2, 1, 3, 0.1, np.empty(3), np.empty(3, dtype=np.int64), np.empty(3))
    with pytest.raises(ValueError):  # a foot the model does not have
        _compiled.soles(kernel, poses, 2, np.zeros((1, 3)), np.zeros(1), Ground(), 0.03)
    with pytest.raises(ValueError):  # more sole points than the buffer holds
        kernel.soles(poses, 4, 2, 1, np.zeros(3), np.zeros(1), 2, 0.0, None, 1, 1, 0.0, 0.0, 1.0,
                     1.0, 0.03, np.empty(4, dtype=np.uint8), np.empty(3),
                     np.empty(4, dtype=np.uint8))
    with pytest.raises(ValueError):  # a frame count that would overflow the sizes
        kernel.frames(poses, 2**61, 2, np.array([-1, 0], dtype=np.int32), table.ints,
                      table.doubles, 2, 0.0, None, 1, 1, 0.0, 0.0, 1.0, 1.0, np.ones(3), False,
                      30.0, 0.1, 0.1, None, None, None, None, None)


def test_a_model_changed_after_a_check_is_checked_as_it_is_now() -> None:
    """The per-model caches are keyed on what the checks read of a model, not on the
    object: bigger shapes after a first check give what a first check of them gives, and
    an unchanged copy of the model still gets the first answer."""

    def read() -> mk.Skeleton:  # a model of its own (clips.model is shared by the tests)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = mk.read(corpus_file("parc", "character", "humanoid.xml"))
        assert isinstance(found, mk.Skeleton)
        return found

    motion, _ = clip("parc_sfu")
    humanoid, fresh = read(), read()
    first = check(motion, humanoid)
    for edited_model in (humanoid, fresh):  # the same edit of the checked one and a new one
        for body in edited_model.bodies:
            for shape in body.shapes:
                if "radius" in shape.params:
                    shape.params["radius"] = float(shape.params["radius"]) * 3
                if "size" in shape.params:
                    shape.params["size"] = np.asarray(shape.params["size"]) * 3
    edited, new = both(lambda: check(motion, humanoid))
    same_report(edited, new)
    same_report(edited, check(motion, fresh))
    assert edited.result("below_ground").value < first.result("below_ground").value - 0.01
    assert edited.verdict != first.verdict
    same_report(first, check(motion, read()))
