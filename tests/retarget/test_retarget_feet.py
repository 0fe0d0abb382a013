"""Planted feet in the default mode (spec §7, foot skating): while the source's toe is planted
the robot's sole stays still, flat and on the ground; GMR's sole slides (0.43 m/s here)."""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest
from clips import frames

import motionkit as mk
from conftest import corpus_file
from motionkit import retarget
from motionkit.errors import ConversionError

FPS = 30.0
SIDES = {"left": "LeftToe", "right": "RightToe"}


@cache
def _inputs(case: str) -> tuple[mk.Motion, mk.Skeleton, retarget.BodyMap, dict[str, object]]:
    folder = corpus_file("retarget", "bvh_to_g1.json").parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the floor geom belongs to no body
        robot = mk.read(folder / "g1_mocap_29dof_nomesh.xml")
    settings: dict[str, object] = {
        "rename": retarget.read_rename(folder / "freebvh_lafan1_names.json"),
        "fix": retarget.read_frame_fix(folder / "freebvh_orientation_correction.json")
        if case == "corrected" else None}
    return (mk.read(corpus_file("bvh", "test_freebvh.bvh")), robot,
            retarget.read_map(folder / "bvh_to_g1.json"), settings)


@cache
def _run(case: str, plant: bool) -> mk.Motion:
    source, robot, body_map, settings = _inputs(case)
    return retarget.retarget(source, robot, body_map, options=retarget.Options(
        plant_feet=plant), **settings).motion  # type: ignore[arg-type]


def _planted_pairs(case: str) -> dict[str, np.ndarray]:
    """The spec's rule, on the source toe: horizontal speed < 0.1 m/s and one frame of the
    pair within 2 cm of the toe's lowest height."""
    source, _, _, settings = _inputs(case)
    rename = settings["rename"]
    assert isinstance(rename, dict) and source.skeleton is not None
    links = mk.kinematics.motion.link_poses(source.skeleton, source)
    names = [rename.get(name, name) for name in links.labels or []]
    out = {}
    for side, toe in SIDES.items():
        path = links.data[:, names.index(toe), :3]
        speed = np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1) * FPS
        low = path[:, 2] - path[:, 2].min() <= 0.02
        out[side] = (speed < 0.1) & (low[:-1] | low[1:])
    return out


def _soles(motion: mk.Motion) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per foot: the centre of its contact spheres, the lowest sphere point, and the tilt of
    the foot's z axis from the vertical (degrees), per frame."""
    _, robot, _, _ = _inputs("corrected")
    links = mk.kinematics.motion.link_poses(robot, motion)
    out = {}
    for side in SIDES:
        index = robot.body_index(f"{side}_ankle_roll_link")
        spheres = [s for s in robot.bodies[index].shapes if s.kind == "sphere"]
        pose = links.data[:, index]
        centres = np.stack([pose[:, :3] + mk.spatial.quaternion.rotate(
            pose[:, 3:7], s.transform[:3, 3]) for s in spheres], 1)
        bottom = (centres[..., 2] - np.array([s.params["radius"] for s in spheres])).min(1)
        up = mk.spatial.quaternion.rotate(pose[:, 3:7], np.array([0.0, 0.0, 1.0]))
        out[side] = (centres.mean(1), bottom, np.degrees(np.arccos(np.clip(up[:, 2], -1, 1))))
    return out


def test_the_planted_rule_counts_the_specs_pairs() -> None:
    pairs = _planted_pairs("corrected")
    assert (pairs["left"].sum(), pairs["right"].sum()) == (31, 35)


def _worst_on_planted_pairs(case: str, plant: bool) -> dict[str, float]:
    """Over both feet's planted pairs: the sole's fastest horizontal speed (m/s), its worst
    tilt (°), its lowest point's farthest distance from the ground (m)."""
    soles = _soles(_run(case, plant))
    worst = {"speed": 0.0, "tilt": 0.0, "height": 0.0}
    for side, pairs in _planted_pairs(case).items():
        centre, bottom, tilt = soles[side]
        speed = np.linalg.norm(np.diff(centre[:, :2], axis=0), axis=1) * FPS
        frames = np.concatenate([pairs, [False]]) | np.concatenate([[False], pairs])
        worst["speed"] = max(worst["speed"], float(speed[pairs].max()))
        worst["tilt"] = max(worst["tilt"], float(tilt[frames].max()))
        worst["height"] = max(worst["height"], float(np.abs(bottom[frames]).max()))
    return worst


@pytest.mark.parametrize("plant", [True, False])
def test_a_planted_sole_stays_still_flat_and_on_the_ground(plant: bool) -> None:
    """Spec §7's bounds on every planted pair: speed < 0.05 m/s, tilt < 5°, lowest sole
    point within 5 mm of the ground. Without planting (GMR's way) the sole slides."""
    worst = _worst_on_planted_pairs("corrected", plant)
    if plant:
        assert worst["speed"] < 0.05 and worst["tilt"] < 5.0 and worst["height"] < 5e-3, worst
    else:
        assert worst["speed"] > 0.1 and worst["tilt"] > 5.0, worst


def _planted_speeds(case: str, plant: bool) -> np.ndarray:
    soles, speeds = _soles(_run(case, plant)), []
    for side, pairs in _planted_pairs(case).items():
        centre = soles[side][0]
        speeds.append((np.linalg.norm(np.diff(centre[:, :2], axis=0), axis=1) * FPS)[pairs])
    return np.concatenate(speeds)


def test_planting_holds_most_stances_where_the_targets_do_not_fit_the_robot() -> None:
    """``raw`` (GMR's loader frames, no correction: the robot cannot take the human's
    shape): the bound holds on 95 % of planted pairs (17 % without planting; 0.21 against
    0.34 m/s at worst, where a stance starts in a pose the legs cannot reach)."""
    held, free = _planted_speeds("raw", True), _planted_speeds("raw", False)
    assert (held < 0.05).mean() > 0.9 > 0.5 > (free < 0.05).mean()
    assert held.max() < free.max()


@pytest.mark.parametrize("case", ["corrected", "raw"])
def test_the_lowest_point_of_the_clip_is_on_the_ground(case: str) -> None:
    soles = _soles(_run(case, True))
    assert abs(np.minimum(soles["left"][1], soles["right"][1]).min()) < 5e-3


def test_no_planted_frame_has_both_feet_in_the_air() -> None:
    """The issue's rule: no frame has both soles above 2 cm while a source foot is planted."""
    soles = _soles(_run("corrected", True))
    planted = np.zeros(len(soles["left"][1]), dtype=bool)
    for mask in _planted_pairs("corrected").values():
        planted[:-1] |= mask
        planted[1:] |= mask
    assert np.minimum(soles["left"][1], soles["right"][1])[planted].max() < 0.02


def test_feet_named_must_follow_a_source_body() -> None:
    source, robot, body_map, settings = _inputs("corrected")
    with pytest.raises(ConversionError, match="left_toe_link"):
        retarget.retarget(source, robot, body_map, options=retarget.Options(
            feet=("left_toe_link",)), **settings)  # type: ignore[arg-type]


def test_a_map_that_drives_no_foot_says_nothing_is_planted() -> None:
    import dataclasses

    source, robot, body_map, settings = _inputs("corrected")
    footless = dataclasses.replace(body_map, stages=tuple(
        tuple(task for task in stage if "ankle" not in task.robot) for stage in body_map.stages))
    with pytest.warns(mk.MotionkitWarning, match="no robot foot to plant"):
        done = retarget.retarget(source, robot, footless, **settings)  # type: ignore[arg-type]
    assert done.planted_frames == {}


def test_a_creeping_foot_makes_several_stances() -> None:
    """A contact point sliding at 0.05 m/s (under the planted speed) for 2 s is cut into
    stances of at most 2 cm, not pinned at its mean for the whole run."""
    from motionkit.retarget.ground import stances
    from motionkit.retarget.source import SourceFrames

    path = np.zeros((61, 1, 3))
    path[:, 0, 0] = 0.05 * np.arange(61) / 30.0
    runs = stances(SourceFrames(["toe"], path, np.tile(np.eye(3), (61, 1, 1, 1)), 30.0), 0)
    assert sum(stop - start for start, stop in runs) == 61 and len(runs) == 5
    assert all(abs(path[stop - 1, 0, 0] - path[start, 0, 0]) <= 0.02 for start, stop in runs)


def test_nothing_planted_means_one_solve() -> None:
    """One frame plants nothing: the clip is solved once, as with planting off."""
    source, robot, body_map, settings = _inputs("corrected")
    first = frames(source, 0, 1)
    held, free = (retarget.retarget(first, robot, body_map, options=retarget.Options(
        plant_feet=plant), **settings) for plant in (True, False))  # type: ignore[arg-type]
    assert held.planted_frames == {}
    assert np.array_equal(held.steps, free.steps)
    assert np.array_equal(held.motion.tracks["joints"].data, free.motion.tracks["joints"].data)


def test_a_box_foot_stands_on_its_lowest_face_whatever_its_proportions() -> None:
    """A box taller than it is wide (0.2 × 0.06 × 0.08): its sole is the face that looks
    down at rest, not its smallest side (which would roll the foot 90° in a stance)."""
    from motionkit.model.skeleton import Shape
    from motionkit.retarget.ground import _sole

    box = Shape("box", {"size": np.array([0.2, 0.06, 0.08])})
    assert np.allclose(_sole((box,), np.eye(3)), [0.0, 0.0, 1.0])
    tilted = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])  # the body turned 90° about x
    assert np.allclose(tilted @ _sole((box,), tilted), [0.0, 0.0, 1.0])


def test_a_foot_on_a_platform_is_planted_above_its_terrain() -> None:
    """Planted height is measured above the source's terrain: a foot that steps onto a
    0.3 m platform and stands there is planted on both levels (only on the lower one if
    its height were measured from the clip's lowest point)."""
    from motionkit.retarget.ground import stances
    from motionkit.retarget.source import SourceFrames

    path = np.zeros((20, 1, 3))
    path[:10, 0] = [0.5, 0.5, 0.02]
    path[10:, 0] = [1.5, 0.5, 0.32]
    frames = SourceFrames(["toe"], path, np.tile(np.eye(3), (20, 1, 1, 1)), 30.0)
    heights = np.zeros((10, 10))
    heights[5:] = 0.3  # x ≥ 1 m (cells of 0.2 m from x = 0)
    terrain = mk.Terrain(heights, np.zeros(2), 0.2)
    assert stances(frames, 0, terrain=terrain) == [(0, 10), (10, 20)]
    assert stances(frames, 0) == [(0, 10)]


def test_a_terrain_that_is_not_a_number_is_refused() -> None:
    source, robot, body_map, settings = _inputs("corrected")
    broken = mk.Motion(source.tracks, source.skeleton,
                       mk.Terrain(np.full((4, 4), np.nan), np.zeros(2), 1.0), source.meta)
    with pytest.raises(ConversionError, match="terrain"):
        retarget.retarget(broken, robot, body_map, **settings)  # type: ignore[arg-type]
