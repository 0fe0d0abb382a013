"""A BVH character too small in centimetres is named in the unit that fits (CMU's)."""

from __future__ import annotations

from pathlib import Path

import pytest

import motionkit as mk
from test_cli import run_cli


def _chain_bvh(path: Path, step: float, joints: int = 12) -> Path:
    """A chain of ``joints`` joints straight up, ``step`` file units apart."""
    lines = ["HIERARCHY", "ROOT Hips", "{", "  OFFSET 0 0 0",
             "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
    for index in range(1, joints):
        lines += [f"JOINT J{index}", "{", f"  OFFSET 0 {step} 0",
                  "  CHANNELS 3 Zrotation Xrotation Yrotation"]
    lines += ["End Site", "{", f"  OFFSET 0 {step} 0", "}"] + ["}"] * joints
    lines += ["MOTION", "Frames: 1", "Frame Time: 0.0083333", " ".join(["0"] * (3 + 3 * joints))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_cmu_sized_skeleton_is_named_cmu(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = _chain_bvh(tmp_path / "cmu.bvh", 2.3)  # 27.6 units: 0.28 m in cm, 1.56 m in CMU units
    with pytest.warns(mk.MotionkitWarning, match=r"probably unit='cmu' \(1\.56 m\)"):
        mk.read(path)
    code, _, err = run_cli(["info", str(path)], capsys)
    assert code == 0 and "probably -R unit=cmu" in err
    code, _, err = run_cli(["info", "-R", "unit=cmu", str(path)], capsys)
    assert code == 0 and "warning" not in err


def test_a_millimetre_skeleton_is_named_mm(tmp_path: Path) -> None:
    path = _chain_bvh(tmp_path / "mm.bvh", 140.0)  # 1680 units: 16.8 m in cm
    with pytest.warns(mk.MotionkitWarning, match=r"probably unit='mm'"):
        mk.read(path)
