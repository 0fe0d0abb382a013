"""``motionkit check``: the speed goals of issue 28, on the compiled path
(``quality/_check_kernel.c``) and, in the same run, on the NumPy path it replaces where
the extension is not built.

- the height, speed and contact checks on body positions FK already gives (below ground,
  body speed, joint speed, floating, contact labels): ProtoMotions' rules on body origins,
  and the default preset's lowest shape points on flat ground and on the clip's PARC
  terrain; frames per second of one core, on the corpus clip ``dec2024_teaser_717``
  (15 bodies) tiled to ``--frames`` frames;
- self-penetration (the default preset: every frame, every collision shape) on the PARC
  humanoid (15 bodies), MuJoCo Menagerie's Unitree Go2 as MimicKit ships it (17 bodies,
  28 shapes: boxes, cylinders, spheres; the corpus's nearest to 20 bodies with shapes of
  each kind), the SMPL stand-in (24 bodies, 24 spheres), MimicKit's G1 (31 bodies,
  capsules) and ProtoMotions' G1 (33 bodies, box feet): frames per second. The Go2 and
  SMPL models have no motion in the corpus: theirs is made here, every joint swinging
  through half its range (FK of sines);
- a PARC-style dataset of ``--clips`` clips (default 10,000): hard links, under distinct
  names, of the corpus clip ``dec2024_teaser_717_1_modified_opt.pkl`` (142 frames, its
  terrain with pinned cells: the heaviest of the corpus's PARC clips) in a temporary
  folder, checked by ``motionkit batch check FOLDER --model humanoid.xml -j 2 --engine
  local`` as a whole process: its wall and CPU time (the CPU of the process and its
  workers), on the compiled path and (on a tenth of the clips by default) on the NumPy
  path. And read + check of each corpus PARC clip in this process, per clip.

Figures are CPU seconds of this process (best of 3 interleaved rounds) unless a row says
wall.

    python bench/check.py [--frames 200000] [--clips 10000] [--numpy-clips 1000]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _report import Report, Timing, best, interleaved, timed, timed_process

import motionkit as mk
from motionkit.kinematics import forward
from motionkit.kinematics.motion import link_poses
from motionkit.quality import _compiled, check
from motionkit.quality.ground import Ground
from motionkit.quality.presets import DEFAULT, PROTOMOTIONS, Preset

rules = importlib.import_module("motionkit.quality.check")  # the module (the package's
#: ``check`` is the function)
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS",
                             Path(__file__).resolve().parents[2] / "shared" / "corpus"))
HUMANOID = CORPUS / "parc" / "character" / "humanoid.xml"
TEASER = CORPUS / "parc" / "ms" / "dec2024_teaser_717_1_modified_opt.pkl"
KERNEL = _compiled.KERNEL
ROUNDS = 3


def quiet_read(path: Path, **options: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mk.read(path, **options)


def on(path: str, func: Callable[[], object]) -> Callable[[], Timing]:
    """A timed run of ``func`` on the ``compiled`` or the ``numpy`` path."""
    def run() -> Timing:
        _compiled.KERNEL = KERNEL if path == "compiled" else None
        try:
            return timed(func)
        finally:
            _compiled.KERNEL = KERNEL
    return run


PATHS = ["compiled", "numpy"] if KERNEL is not None else ["numpy"]


def tiled(poses: np.ndarray, frames: int) -> np.ndarray:
    reps = -(-frames // len(poses))
    return np.ascontiguousarray(np.tile(poses, (reps, 1, 1))[:frames])


def clip_poses(motion_path: Path, model_path: Path, frames: int, **options: object
               ) -> tuple[mk.Motion, mk.Skeleton, np.ndarray]:
    skeleton = quiet_read(model_path)
    motion = quiet_read(motion_path, character=model_path, **options)
    assert isinstance(skeleton, mk.Skeleton) and isinstance(motion, mk.Motion)
    return motion, skeleton, tiled(link_poses(skeleton, motion).data, frames)


def swinging(model_path: Path, frames: int) -> tuple[mk.Motion, mk.Skeleton, np.ndarray]:
    """A model's poses with every joint swinging through half its range (a quarter turn
    each way where it has none), at its own rate: 30 fps, 4 s, tiled."""
    skeleton = quiet_read(model_path)
    assert isinstance(skeleton, mk.Skeleton)
    lower, upper = skeleton.lower, skeleton.upper
    finite = np.isfinite(lower) & np.isfinite(upper)
    middle = np.where(finite, (np.where(finite, lower, 0.0) + np.where(finite, upper, 0.0)) / 2,
                      0.0)
    reach = np.where(finite, (np.where(finite, upper, 0.0) - np.where(finite, lower, 0.0)) / 4,
                     np.pi / 4)
    t = np.arange(120)[:, None] / 30.0
    rng = np.random.default_rng(7)
    q = middle + reach * np.sin(2 * np.pi * rng.uniform(0.3, 1.2, len(middle)) * t
                                + rng.uniform(0, 2 * np.pi, len(middle)))
    motion = mk.Motion({}, skeleton, None, {})
    return motion, skeleton, tiled(forward(skeleton, q), frames)


def clip_of(motion: mk.Motion, skeleton: mk.Skeleton, poses: np.ndarray, preset: Preset,
            ground: Ground) -> object:
    times = np.arange(len(poses)) / 30.0
    return rules._Clip(motion, skeleton, poses, times, ground, preset,
                       list(rules._feet(rules._Model(skeleton), None)))


def heights_speeds_contacts(report: Report, frames: int) -> None:
    motion, skeleton, poses = clip_poses(TEASER, HUMANOID, frames)
    assert motion.terrain is not None
    terrain = rules.resolve_ground(motion, "terrain")

    def run(preset: Preset, ground: Ground) -> None:
        clip = clip_of(motion, skeleton, poses, preset, ground)
        for name in ("below_ground", "body_speed", "joint_speed", "floating"):
            rules._RULES[name](clip)
        assert clip.contacts is not None  # type: ignore[attr-defined]

    cases = {"protomotions preset (body origins)": (PROTOMOTIONS, Ground()),
             "default preset (lowest shape points), flat ground": (DEFAULT, Ground()),
             "default preset, on the clip's PARC terrain (nearest cell)": (DEFAULT, terrain)}
    for label, (preset, ground) in cases.items():
        runs = interleaved({path: on(path, lambda p=preset, g=ground: run(p, g))
                            for path in PATHS}, ROUNDS)
        rates = {path: frames / best(timings).cpu for path, timings in runs.items()}
        work = (f"below ground + body speed + joint speed + floating + contacts, {label}, "
                f"15 bodies, {frames:,} frames")
        for path, rate in rates.items():
            ratio = (f" ({rate / rates['numpy']:.1f}x the NumPy path)" if path == "compiled"
                     else "")
            report.row(f"{work}: {path} path", f"{rate / 1e6:.2f} M frames/s{ratio}",
                       ">= 1 M frames/s per core", rate >= 1e6)


def self_penetration(report: Report, frames: int) -> None:
    models = {
        "PARC humanoid": lambda: clip_poses(TEASER, HUMANOID, frames),
        "Unitree Go2 (MimicKit's, swinging joints)":
            lambda: swinging(CORPUS / "mimickit" / "go2.xml", frames),
        "SMPL stand-in (swinging joints)":
            lambda: swinging(CORPUS / "containers" / "amass" / "smpl_topology_standin.xml",
                             frames),
        "MimicKit G1": lambda: clip_poses(CORPUS / "mimickit" / "g1_walk.pkl",
                                          CORPUS / "containers" / "characters" / "g1.xml",
                                          frames),
        "ProtoMotions G1 (box feet)": lambda: clip_poses(
            CORPUS / "containers" / "isaaclab" / "g1_kimodo_walk.csv",
            CORPUS / "containers" / "characters" / "g1_bm_no_mesh_box_feet.xml", frames,
            format="g1csv-kimodo"),
    }
    for label, make in models.items():
        motion, skeleton, poses = make()
        clip = clip_of(motion, skeleton, poses, DEFAULT, Ground())
        result = rules._self_penetration(clip)
        shapes = len(rules._collider(rules._Model(skeleton), DEFAULT.penetration_shapes, True)[0].body)
        runs = interleaved({path: on(path, lambda c=clip: rules._self_penetration(c))
                            for path in PATHS}, ROUNDS)
        rates = {path: frames / best(timings).cpu for path, timings in runs.items()}
        for path, rate in rates.items():
            ratio = (f" ({rate / rates['numpy']:.1f}x the NumPy path)" if path == "compiled"
                     else "")
            report.row(f"self-penetration, {label}: {len(skeleton.bodies)} bodies, {shapes} "
                       f"collision shapes, {result.details['shape_pairs']} shape pairs, "
                       f"{frames:,} frames: {path} path",
                       f"{rate / 1e3:.0f} k frames/s{ratio}", ">= 50 k frames/s (20 bodies)",
                       rate >= 5e4)


def per_clip(report: Report) -> None:
    files = [CORPUS / "parc" / "ms" / name for name in
             ("sfu.pkl", "TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl")]
    skeleton = quiet_read(HUMANOID)
    assert isinstance(skeleton, mk.Skeleton)
    motions = {path.name: quiet_read(path, character=HUMANOID) for path in files}

    def read(path: Path) -> None:
        quiet_read(path, character=HUMANOID)

    def checked(name: str) -> None:
        check(motions[name], skeleton)  # type: ignore[arg-type]

    for path in files:
        read(path)
        checked(path.name)  # warm
    candidates: dict[str, Callable[[], Timing]] = {}
    for path in files:
        candidates[f"read {path.name}"] = lambda p=path: timed(lambda: read(p))
        for way in PATHS:
            candidates[f"check {path.name} {way}"] = on(way, lambda n=path.name: checked(n))
    runs = interleaved(candidates, ROUNDS)
    cpu = {name: best(timings).cpu for name, timings in runs.items()}
    header = ["clip", "frames", "read (ms)"] + [f"check, {way} path (ms)" for way in PATHS]
    rows = [[path.name, str(motions[path.name].frames),  # type: ignore[attr-defined]
             f"{cpu[f'read {path.name}'] * 1e3:.1f}"]
            + [f"{cpu[f'check {path.name} {way}'] * 1e3:.2f}" for way in PATHS] for path in files]
    report.table(header, rows)


def batch_check(folder: Path, out: Path, numpy_path: bool) -> Timing:
    """``motionkit batch check`` of ``folder`` as a whole process; on the NumPy path, the
    extension made unimportable in every process (a ``sitecustomize`` on PYTHONPATH: the
    workers are spawned, so they run it too)."""
    command = [sys.executable, "-m", "motionkit", "batch", "check", str(folder), "--out",
               str(out), "--model", str(HUMANOID), "-j", "2", "--engine", "local"]
    if not numpy_path:
        return timed_process(command)
    site = out.parent / f"{out.name}-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nsys.modules['motionkit.quality._check_kernel'] = None\n")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return timed_process(command, env={"PYTHONPATH": path})


def dataset(report: Report, clips: int, numpy_clips: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mk-check-bench-") as temp:
        root = Path(temp)
        runs: dict[str, tuple[int, Timing, int]] = {}
        for path, count in (("compiled", clips), ("numpy", numpy_clips)):
            if count < 1 or (path == "compiled" and KERNEL is None):
                continue
            folder = root / f"clips-{path}"
            for index in range(count):
                part = folder / f"part{index % 100:02d}"
                part.mkdir(parents=True, exist_ok=True)
                os.link(TEASER, part / f"clip{index:05d}.pkl")
            out = root / f"out-{path}"
            timing = batch_check(folder, out, path == "numpy")
            runs[path] = (count, timing, sum(1 for _ in out.rglob("*.json")))
    for path, (count, timing, written) in runs.items():
        ratio = ""
        if path == "compiled" and "numpy" in runs:
            other = runs["numpy"]
            ratio = (f"; the NumPy path takes {other[1].cpu / other[0] * 1e3:.1f} ms CPU a "
                     f"clip ({other[0]:,} clips: {other[1].wall:.0f} s wall)")
        report.row(f"`motionkit batch check` of a {count:,}-clip PARC-style dataset (142 "
                   f"frames a clip, {142 * count:,} frames) on 2 cores, local engine, whole "
                   f"process, {path} path ({written:,} reports written)",
                   f"{timing.wall:.0f} s wall, {timing.cpu:.0f} s CPU = {timing.cpu / 2:.0f} s "
                   f"of 2 cores ({timing.cpu / count * 1e3:.1f} ms CPU a clip{ratio})",
                   "< 120 s" + (" (for 10,000 clips)" if count != 10_000 else ""),
                   timing.wall < 120 * count / 10_000 if path == "compiled" or
                   "compiled" not in runs else None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=200_000)
    parser.add_argument("--clips", type=int, default=10_000,
                        help="clips in the generated dataset (the goal is for 10,000)")
    parser.add_argument("--numpy-clips", type=int, default=None,
                        help="clips checked on the NumPy path too (default: a tenth)")
    args = parser.parse_args()
    report = Report("check", "motionkit check: heights, speeds, contacts, self-penetration")
    report.note("compiled path: " + ("quality/_check_kernel.c (built)" if KERNEL is not None
                                     else "NOT BUILT: only the NumPy path ran"))
    heights_speeds_contacts(report, args.frames)
    self_penetration(report, min(args.frames, 20_000))
    per_clip(report)
    dataset(report, args.clips,
            args.clips // 10 if args.numpy_clips is None else args.numpy_clips)
    report.note("CPU seconds of this process, best of 3 interleaved rounds, one core, unless "
                "a row says wall. Self-penetration: exact gaps only for shape pairs whose "
                "bounding balls are within 0.1 m (quality.shapes.NEAR), the bound elsewhere. "
                "The dataset row is one run of the whole command on a machine shared with "
                "other sessions (load average above): its wall time includes the start of "
                "the workers and the writing of each report and the catalog.")
    report.finish()


if __name__ == "__main__":
    main()
