"""APE and RPE statistics and pair counts equal evo's (run here) on every corpus pair, to 1e-9."""

from __future__ import annotations

import pytest
from evalcases import CASES, assert_stats, close, evo, ours

from motionkit import evaluation as ev

pytestmark = pytest.mark.corpus

RELATIONS = ["translation", "rotation_angle"]


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("align", ["none", "se3", "sim3"])
@pytest.mark.parametrize("name", list(CASES))
def test_ape_equals_evo(name: str, align: str, relation: str) -> None:
    ref, est = ours(name)
    result = ev.ape(ref, est, align=align, relation=relation)
    expected, pairs = evo(name, "ape", relation, align)
    assert result.pairs == pairs
    assert_stats(result.stats, expected)


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("unit", ["frames", "m"])
@pytest.mark.parametrize("name", list(CASES))
def test_rpe_equals_evo(name: str, unit: str, relation: str) -> None:
    delta = 1 if unit == "frames" else CASES[name].meters
    ref, est = ours(name)
    result = ev.rpe(ref, est, delta=delta, unit=unit, relation=relation)
    expected, pairs = evo(name, "rpe", relation, delta=delta, unit=unit)
    assert result.pairs == pairs
    assert_stats(result.stats, expected)


@pytest.mark.parametrize(("name", "relation"), [("KITTI_00", "translation"), ("bag_ORB", "rotation_angle"),
                                                ("fr1_xyz", "translation")])
def test_rpe_all_pairs_in_meters_equals_evo(name: str, relation: str) -> None:
    ref, est = ours(name)
    delta = CASES[name].meters
    result = ev.rpe(ref, est, delta=delta, unit="m", all_pairs=True, relation=relation)
    expected, pairs = evo(name, "rpe", relation, delta=delta, unit="m", all_pairs=True)
    assert result.pairs == pairs
    assert_stats(result.stats, expected)


@pytest.mark.parametrize("relation", ["full", "rotation", "point_distance"])
def test_other_relations_equal_evo(relation: str) -> None:
    ref, est = ours("KITTI_00")
    assert_stats(ev.ape(ref, est, align="se3", relation=relation).stats,
                 evo("KITTI_00", "ape", relation, "se3")[0])
    result = ev.rpe(ref, est, delta=10, relation=relation)
    assert_stats(result.stats, evo("KITTI_00", "rpe", relation, delta=10)[0])


# Spec §7.1/§7.2 (evo 1.38.1 CLI, bit-exact stats.json): a check that does not need evo installed.
SPEC_RMSE = {
    ("KITTI_00", "ape", "se3"): (4541, 1.303449714565045),
    ("KITTI_00", "ape", "sim3"): (4541, 0.937709073611404),
    ("fr2_desk", "ape", "se3"): (2174, 0.008118977562045396),
    ("fr1_xyz", "ape", "sim3"): (785, 0.013389384904168217),
    ("bag_ORB", "ape", "se3"): (2550, 5.509938188274028),
    ("KITTI_00", "rpe", "100m"): (36, 1.1939759245846355),
    ("fr2_desk", "rpe", "1m"): (19, 0.011671538090785628),
    ("bag_ORB", "rpe", "1f"): (2549, 0.036799011943211064),
}


@pytest.mark.parametrize("key", list(SPEC_RMSE))
def test_spec_reference_numbers(key: tuple[str, str, str]) -> None:
    name, metric, mode = key
    ref, est = ours(name)
    if metric == "ape":
        result = ev.ape(ref, est, align=mode)
    else:
        delta, unit = (1, "frames") if mode == "1f" else (float(mode[:-1]), "m")
        result = ev.rpe(ref, est, delta=delta, unit=unit)
    pairs, rmse = SPEC_RMSE[key]
    assert result.pairs == pairs
    assert close(result.stats["rmse"], rmse)


def test_alignment_matrix_equals_evo_spec() -> None:
    """§7.1: fr1_xyz Sim(3) alignment [[c·R, t]] row 0."""
    ref, est = ours("fr1_xyz")
    pairs = ev.associate(ref, est)
    a = ev.align(pairs.ref, pairs.est, "sim3")
    row = [*(a.scale * a.rotation[0]), a.translation[0]]
    expected = [1.0075194507191538, -0.02598738896563259, -0.017205061488709684, 0.04585310750242866]
    assert all(close(x, y) for x, y in zip(row, expected, strict=True))
