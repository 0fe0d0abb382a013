"""The motionkit demo: make a motion, write it in three Choreonoid versions, resample a
time-stamped one, export the root path as trajectories, and show what each file holds.
Uses only data generated here.

Run with ``make demo``; outputs go to ``demo-output/``.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import motionkit as mk
from motionkit.cli.info import render

OUT = Path(__file__).resolve().parents[1] / "demo-output"


def make_walk(rate: float = 200.0, seconds: float = 2.0) -> mk.Motion:
    """A small two-link 'robot' swaying forward: link poses, joints, a root-relative ZMP."""
    count = int(rate * seconds) + 1
    timeline = mk.Timeline.uniform(rate, count)
    t = timeline.times
    phase = 2 * np.pi * t
    links = np.zeros((count, 2, 7))
    links[:, 0, 0] = 0.3 * t  # the root walks forward along x
    links[:, 0, 2] = 0.7 + 0.01 * np.sin(2 * phase)
    links[:, 0, 3:] = Rotation.from_euler("z", 0.1 * np.sin(phase)[:, None]).as_quat()
    links[:, 1, :3] = links[:, 0, :3] + [0.0, 0.0, 0.3]
    links[:, 1, 3:] = Rotation.from_euler("zy", np.c_[0.1 * np.sin(phase), 0.2 * np.sin(phase)]).as_quat()
    joints = np.c_[0.4 * np.sin(phase), -0.4 * np.sin(phase), 0.2 * np.cos(phase)]
    zmp = np.c_[0.02 * np.sin(phase), 0.05 * np.cos(phase), -0.7 * np.ones(count)]
    motion = mk.Motion(meta={"name": "demo sway"})
    motion.add(mk.Track("links", "pose", links, timeline, labels=["WAIST", "CHEST"]))
    motion.add(mk.Track("joints", "value", joints, timeline, labels=["HIP", "KNEE", "ANKLE"]))
    motion.add(mk.Track("zmp", "vector3", zmp, timeline, attrs={"root_relative": True}))
    return motion


def make_stamped() -> mk.Motion:
    """Irregular time stamps, as a logger or a simulator with variable steps records them."""
    rng = np.random.default_rng(7)
    stamps = np.cumsum(np.r_[0.0, rng.uniform(0.02, 0.05, 40)])
    values = np.c_[np.sin(stamps), np.cos(stamps)]
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", values, mk.Timeline.stamped(stamps, rate=30)))
    return motion


def show(path: Path) -> None:
    fmt = "traj" if path.suffix == ".traj" else "seq"
    print(render(str(path.relative_to(OUT.parent)), fmt, mk.read(path)))
    print()


def evaluate_estimate() -> None:
    """Make a ground-truth loop and an 'odometry estimate' of it (another frame, 2 % scale
    error, noise, a clock 13 ms late), then measure the estimate as evo would."""
    from motionkit import evaluation as ev
    from motionkit.spatial.quaternion import from_rpy, multiply, rotate

    t = np.arange(0.0, 60.0, 0.01)
    xyz = np.column_stack([10 * np.sin(0.2 * t), 6 * np.sin(0.4 * t), 0.5 * np.sin(0.1 * t)])
    yaw = np.unwrap(np.arctan2(np.gradient(xyz[:, 1]), np.gradient(xyz[:, 0])))
    quat = from_rpy(np.column_stack([0.05 * np.sin(t), 0.05 * np.cos(t), yaw]))
    rng = np.random.default_rng(7)
    frame = from_rpy([0.0, 0.0, 0.8])
    est_xyz = rotate(frame, 1.02 * xyz) + np.array([1.0, -2.0, 0.3]) + rng.normal(0, 0.02, xyz.shape)
    for name, stamps, pose in (("loop_gt.tum", t, np.column_stack([xyz, quat])),
                               ("loop_estimate.tum", t - 0.013,
                                np.column_stack([est_xyz, multiply(frame, quat)]))):
        track = mk.Track("root", "pose", pose, mk.Timeline.stamped(stamps))
        mk.write(OUT / name, mk.Motion({"root": track}))
    gt, est = ev.read_poses(OUT / "loop_gt.tum"), ev.read_poses(OUT / "loop_estimate.tum")
    offset = ev.estimate_offset(gt, est, kind="sim3")
    result = ev.ape(gt, est, align="sim3", match="interpolate", offset=offset)
    result.save(OUT / "loop_ape.json")
    print(f"7. evaluated a generated estimate against its ground truth (clock offset found: "
          f"{offset * 1000:.2f} ms, planted 13 ms; result in loop_ape.json):")
    print(result.summary())
    if importlib.util.find_spec("matplotlib"):  # the optional [plot] extra
        from motionkit.plot.evaluation import save_evaluation

        save_evaluation(result, gt, est, OUT / "loop_ape.png")
        print("   and drew both paths and the errors: loop_ape.png")
    print()


def look_at_it(walk: Path) -> None:
    """Draw the loop's two trajectories and write a viewer page of the generated walk."""
    have = {name: importlib.util.find_spec(name) is not None for name in ("matplotlib", "viser")}
    if have["matplotlib"]:
        from motionkit.plot import save

        figure = mk.plot(OUT / "loop_gt.tum", OUT / "loop_estimate.tum")
        print(f"8. plotted both loop trajectories (top view, xyz, rpy): {save(figure, OUT / 'loop.png')}")
    if have["viser"]:
        page = OUT / "walk_view.html"
        mk.view(walk, html=page)
        print(f"9. wrote a 3D viewer page of the walk (open it in a browser, offline): {page}")
    if not all(have.values()):
        print("   (plots need motionkit[plot], the viewer motionkit[view])")
    print()


def main() -> None:
    warnings.showwarning = lambda message, *_: print(f"   warning: {message}")
    OUT.mkdir(exist_ok=True)
    walk = OUT / "walk_v2.seq"
    mk.write(walk, make_walk())
    print(f"1. wrote a 3-component motion (links, joints, ZMP) as Choreonoid version 2: {walk.name}")
    for version in (4, 1):
        target = OUT / f"walk_v{version}.seq"
        mk.convert(walk, target, version=version)
        print(f"2. converted it to version {version}: {target.name}")
    mk.convert(walk, OUT / "walk_choreonoid_digits.seq", precision=9)
    print("3. wrote Choreonoid's own 9-digit numbers: walk_choreonoid_digits.seq")
    stamped = OUT / "stamped.seq"
    mk.write(stamped, make_stamped())
    mk.convert(stamped, OUT / "stamped_linear_100hz.seq", rate=100, method="linear")
    mk.convert(stamped, OUT / "stamped_as_choreonoid_30hz.seq", rate=30, method="choreonoid")
    print("4. resampled a time-stamped motion to 100 Hz (interpolated) and to 30 Hz with "
          "Choreonoid's own import rule")
    mk.convert(walk, OUT / "walk_root.traj", lossy=True)
    mk.convert(walk, OUT / "walk_root.tum", lossy=True)
    print("5. wrote the root link's path as a trajectopy .traj and a TUM file "
          "(--lossy: the joints and ZMP have no place there)")
    again = mk.read(OUT / "walk_v1.seq")
    exact = all(np.array_equal(again.tracks[n].data, mk.read(walk).tracks[n].data)
                for n in ("links", "joints", "zmp"))
    print(f"6. version 2 -> 1 -> read back is bit-exact: {exact}\n")
    evaluate_estimate()
    look_at_it(walk)
    for name in ("walk_v4.seq", "stamped.seq", "stamped_linear_100hz.seq", "walk_root.traj"):
        show(OUT / name)
    print(f"All outputs are in {OUT}/ ; try: .venv/bin/motionkit info {OUT.name}/walk_v4.seq")


if __name__ == "__main__":
    main()
