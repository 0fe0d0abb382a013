"""``check`` against the corpus quality oracle (spec containers-and-quality §7.4): the
protomotions preset gives ProtoMotions' verdicts and measured values (1e-6) on every
motion and planted defect; the default preset catches every defect, the foot slide
included, and passes PARC's terrain clips on their terrain. Every test runs on both
paths: the compiled checks (``quality/_check_kernel.c``) and NumPy."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_compiled
from motionkit.quality import DEFAULT, _compiled, check
from quality.clips import CLIPS, PARC_TERRAIN, clip, model, oracle, with_defect

KERNEL = _compiled.KERNEL


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test on the compiled path (it must be built where a C compiler is), then on
    the NumPy path."""
    if request.param == "compiled":
        require_compiled(KERNEL is not None, "motionkit.quality._check_kernel")
    _compiled.KERNEL = KERNEL if request.param == "compiled" else None
    yield str(request.param)
    _compiled.KERNEL = KERNEL


VERDICTS = {"min_height": "below_ground", "body_velocity": "body_speed",
            "dof_velocity": "joint_speed", "floating": "floating"}
CASES = [(name, variant) for name in CLIPS
         for variant in ("original", "sunk_frame_10cm", "root_spike_20mps", "float_1s_0p3m",
                         "foot_slide_0p5m")
         if name in ("humanoid_platform05", "g1_kimodo_walk") or variant == "original"]


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_the_protomotions_preset_reproduces_the_oracle(name: str, variant: str) -> None:
    motion, skeleton = clip(name)
    report = check(with_defect(motion, skeleton, name, variant), skeleton, preset="protomotions")
    facts = oracle()[name]["variants"][variant]  # type: ignore[index]
    expected = facts["filter"]
    verdict = expected["verdict"]
    assert report.verdict == ("pass" if verdict == "pass"
                              else f"fail:{VERDICTS[verdict.split(':')[1]]}")
    assert report.result("below_ground").value == pytest.approx(expected["min_height"], abs=1e-6)
    assert report.result("body_speed").value == pytest.approx(
        expected["max_abs_fd_velocity_component"], abs=1e-6)
    assert report.result("joint_speed").value == pytest.approx(expected["max_abs_dof_vel"],
                                                               abs=1e-6)
    floating = report.result("floating")
    assert floating.value == expected["longest_run_lowest_point_above_floor_plus_threshold"]
    assert floating.threshold == expected["frames_needed"]
    names = report.body_names
    feet = [names.index(foot) for foot in oracle()[name]["feet"]]  # type: ignore[union-attr]
    assert report.contacts is not None
    assert report.contacts[:, feet].sum(axis=0).tolist() == facts["contacts_feet_true_frames_conv"]
    assert int(report.contacts.sum()) == facts["contacts_all_true_conv"]
    penetration = facts.get("self_penetration")
    if penetration is not None:
        result = report.result("self_penetration")
        assert result.passed == (penetration["verdict"] == "pass")
        assert result.value == pytest.approx(penetration["worst_depth"], abs=1e-6)
        assert result.details["frames_checked"] == penetration["frames_checked"]
        assert result.details["pairs_checked"] == penetration["pairs_checked"]
        assert round(float(result.details["min_gap_m"]), 5) == penetration["min_gap_m"]  # type: ignore[arg-type]


def test_the_protomotions_contacts_equal_the_oracle_labels_frame_by_frame() -> None:
    for name in CLIPS:
        motion, skeleton = clip(name)
        stored = np.load(corpus_file("containers", "quality", f"quality_{name}.npz"))
        report = check(motion, skeleton, preset="protomotions")
        assert np.array_equal(report.contacts, stored["contacts_conv__original"]), name
        assert np.array_equal(check(motion, skeleton, preset="protomotions", contact_speed=0.1,
                                    contact_height=0.08).contacts,
                              stored["contacts_default__original"]), name


@pytest.mark.parametrize(("variant", "failing"), [
    ("sunk_frame_10cm", "below_ground"), ("root_spike_20mps", "body_speed"),
    ("float_1s_0p3m", "floating"), ("foot_slide_0p5m", "foot_skating")])
def test_the_default_preset_catches_every_planted_defect(variant: str, failing: str) -> None:
    motion, skeleton = clip("g1_kimodo_walk")
    assert check(motion, skeleton).passed
    report = check(with_defect(motion, skeleton, "g1_kimodo_walk", variant), skeleton)
    assert failing in report.failed


def test_the_default_preset_finds_the_slide_where_it_was_planted() -> None:
    motion, skeleton = clip("g1_kimodo_walk")
    report = check(with_defect(motion, skeleton, "g1_kimodo_walk", "foot_slide_0p5m"), skeleton)
    result = report.result("foot_skating")
    first, stop = oracle()["g1_kimodo_walk"]["slide_frames"]  # type: ignore[misc]
    assert result.first_frame is not None and first <= result.first_frame < stop
    assert 0.3 < result.value <= 0.5 + 1e-9  # most of the 0.5 m, never more


def test_the_verdict_does_not_depend_on_the_order_of_the_checks() -> None:
    motion, skeleton = clip("g1_kimodo_walk")
    broken = with_defect(motion, skeleton, "g1_kimodo_walk", "float_1s_0p3m")
    forward = check(broken, skeleton)
    backward = check(broken, skeleton, preset=dataclasses.replace(
        DEFAULT, checks=tuple(reversed(DEFAULT.checks))))
    assert sorted(forward.failed) == sorted(backward.failed)
    assert {r.name: r.value for r in forward.results} == {r.name: r.value
                                                          for r in backward.results}


@pytest.mark.parametrize("name", PARC_TERRAIN)
def test_parc_terrain_clips_pass_on_their_terrain(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(corpus_file("parc", "ms", name),
                         character=corpus_file("parc", "character", "humanoid.xml"))
    assert isinstance(motion, mk.Motion)
    skeleton = model("parc", "character", "humanoid.xml")
    report = check(motion, skeleton)
    assert report.passed, report.lines()
    flat = check(motion, skeleton, ground=0.0)
    if name != "sfu.pkl":  # sfu's terrain is flat where it walks
        assert not flat.passed  # what the flat-ground rules say of the same clip
    assert report.contact_agreement is not None
    assert float(report.contact_agreement["agreement"]) > 0.9  # type: ignore[arg-type]


def test_the_default_contacts_on_the_g1_walk_equal_the_oracle() -> None:
    motion, skeleton = clip("g1_walk")
    stored = np.load(corpus_file("containers", "quality", "quality_g1_walk.npz"))
    report = check(motion, skeleton, contact_speed=0.15, contact_height=0.1)
    assert np.array_equal(report.contacts, stored["contacts_conv__original"])


def test_the_contact_velocity_is_protomotions_horizon_3_rule() -> None:
    from motionkit.quality.check import contact_speed, contact_velocity

    for name in CLIPS:
        motion, skeleton = clip(name)
        stored = np.load(corpus_file("containers", "quality", f"quality_{name}.npz"))
        positions = mk.kinematics.link_poses(skeleton, motion).data[..., :3]
        fps = float(stored["fps"])
        velocity = contact_velocity(positions, fps)
        assert np.abs(velocity - stored["vel_h3__original"]).max() < 1e-5  # float32 stored
        assert np.allclose(contact_speed(positions, fps), np.linalg.norm(velocity, axis=-1),
                           rtol=1e-12, atol=1e-12)


def test_a_frame_that_is_not_a_number_fails_every_check_that_measures_it() -> None:
    motion, skeleton = clip("g1_kimodo_walk")
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[40, 2] = np.nan
    tracks = dict(motion.tracks)
    tracks["root"] = motion.tracks["root"].with_data(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = check(mk.Motion(tracks, motion.skeleton, None, dict(motion.meta)), skeleton)
    for name in ("below_ground", "body_speed", "floating", "foot_skating", "self_penetration"):
        result = report.result(name)
        assert not result.passed and result.first_frame == 40, name
        assert "1 frame(s) not a number" in result.note or name == "body_speed", name
    # the other frames' closest gap is still reported; check --json is strict JSON
    gap = report.result("self_penetration").details["min_gap_m"]
    assert isinstance(gap, float) and np.isfinite(gap)
    strict = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert strict["checks"][0]["value"] is None  # below_ground's worst frame is NaN


def test_the_catalog_row_is_flat_and_the_report_is_json() -> None:
    import json

    motion, skeleton = clip("g1_kimodo_walk")
    report = check(with_defect(motion, skeleton, "g1_kimodo_walk", "root_spike_20mps"), skeleton)
    row = report.catalog_row()
    assert row["check.ok"] is False and row["check.verdict"] == "fail:body_speed"
    assert row["check.body_speed"] == pytest.approx(report.result("body_speed").value)
    assert row["check.body_speed.ok"] is False and row["check.below_ground.ok"] is True
    assert all(isinstance(v, bool | float | str) or v is None for v in row.values())
    assert json.loads(json.dumps(report.to_dict()))["verdict"] == "fail:body_speed"
