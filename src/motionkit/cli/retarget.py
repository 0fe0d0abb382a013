"""``motionkit retarget SRC --robot MODEL --map MAP -o OUT``: a motion onto a robot."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import numpy as np
from tqdm import tqdm

from .. import api
from ..retarget.plan import write_robot_motion

if TYPE_CHECKING:
    from ..retarget import Plan
from ._common import clean, refuse_source_as_output

#: The options that make a retargeting plan, shared with ``batch retarget``.
PLAN_OPTIONS = (
    click.option("--robot", required=True, type=click.Path(dir_okay=False), metavar="MODEL",
                 help="The robot: MJCF, URDF, Choreonoid .body or DART .skel."),
    click.option("--map", "map_path", type=click.Path(dir_okay=False), metavar="MAP.json",
                 help="The body map: GMR's ik_config JSON (or --by-name)."),
    click.option("--by-name", is_flag=True,
                 help="Robot → robot: every body follows the source body of its name."),
    click.option("--rename", type=click.Path(dir_okay=False), metavar="NAMES.json",
                 help="Source body names → the names the map uses ({old: new})."),
    click.option("--frame-fix", type=click.Path(dir_okay=False), metavar="FIX.json",
                 help="Per-body constant right factors adapting the source's bone frames to "
                      "the map's offsets (right_factor_wxyz)."),
    click.option("--like-gmr", is_flag=True,
                 help="Reproduce GMR exactly: height 1.75 m, 30 fps, frame 0 from the default "
                      "pose, no ground handling."),
    click.option("--height", type=click.FloatRange(min=0, min_open=True), metavar="METRES",
                 help="The source's height (default: measured; 1.75 with --like-gmr)."),
    click.option("--ground-clearance", type=float, default=0.0, show_default=True,
                 metavar="METRES", help="Height of the robot's lowest point over the clip."),
    click.option("--no-ground", is_flag=True, help="Leave the root height as solved."),
    click.option("--lock-base", is_flag=True,
                 help="Hold the root at the model's pose (a fixed base, or an upper body only)."),
    click.option("--max-joint-speed", type=float, metavar="RAD/S",
                 help="The most any joint may move per second between output frames."),
    click.option("--no-plant-feet", is_flag=True,
                 help="Let the robot's feet follow the source's while planted (GMR's way) "
                      "instead of holding them still, flat and on the ground."),
    click.option("--smoothing", type=float, metavar="WEIGHT",
                 help="Pull each frame's joints toward constant speed (e.g. 10: less jitter "
                      "for a little tracking)."),
    click.option("--feet", metavar="BODY,BODY", callback=lambda _c, _p, v: tuple(
                     name.strip() for name in v.split(",")) if v else None,
                 help="The robot's feet to plant (default: the mapped bodies lowest at rest)."),
)


def plan_options(func: Callable[..., None]) -> Callable[..., None]:
    """The plan's options on a command."""
    for option in reversed(PLAN_OPTIONS):
        func = option(func)
    return func


def plan_of(settings: dict[str, object]) -> Plan:
    """The Plan of the plan options' values (taken out of ``settings``)."""
    from ..retarget import Options, Plan

    def take(key: str) -> Any:  # click has checked each value's type
        return settings.pop(key)

    def path(key: str) -> str | None:  # absolute: a batch worker may start elsewhere
        value = take(key)
        return None if value is None else os.path.abspath(value)

    like_gmr, clearance, no_ground = take("like_gmr"), take("ground_clearance"), take("no_ground")
    options = Options(like_gmr, take("height"), None if no_ground or like_gmr else clearance,
                      take("lock_base"), take("max_joint_speed"),
                      plant_feet=False if take("no_plant_feet") else None, feet=take("feet"),
                      smoothing=take("smoothing"))
    robot = path("robot")
    assert robot is not None  # a required option
    return Plan(robot, path("map_path"), take("by_name"), path("rename"), path("frame_fix"),
                options)


@click.command("retarget", epilog="""\b
Examples:
  motionkit retarget walk.bvh --robot g1.xml --map bvh_to_g1.json -o walk_g1.pkl --to gmr
  motionkit retarget mixamo.bvh --robot g1.xml --map bvh_to_g1.json \\
      --rename mixamo_names.json --frame-fix mixamo_fix.json -o out.pkl --to gmr
  motionkit retarget walk.bvh --robot g1.xml --map bvh_to_g1.json --like-gmr -o gmr.pkl
  motionkit retarget walk.bvh --robot g1.xml --map bvh_to_g1.json --height 1.62 -o g1.seq
  motionkit retarget g1_walk.pkl --character g1.xml --robot h1.xml --by-name -o h1.pkl
  motionkit retarget walk.seq --model SR1.body --robot sr1.urdf --by-name -o sr1.pkl --to gmr""")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Where the robot motion goes (its format from --to or the extension).")
@click.option("--to", "to_format", metavar="FORMAT", help="Format of OUT, e.g. gmr.")
@click.option("--character", type=click.Path(dir_okay=False),
              help="The source's character (a PARC or MimicKit motion).")
@click.option("--model", "source_model", type=click.Path(dir_okay=False), metavar="MODEL",
              help="The source's body model (a Choreonoid .seq's .body, or any model).")
@click.option("--lossy", is_flag=True, help="Let the writer drop what OUT cannot hold.")
@click.option("--plot-errors", type=click.Path(dir_okay=False), metavar="FIGURE",
              help="Draw each tracked body's distance to its target over time (.png, .svg).")
@plan_options
def command(source: str, out: str, to_format: str | None, character: str | None,
            source_model: str | None, lossy: bool, plot_errors: str | None,
            **settings: object) -> None:
    """Retarget SOURCE (BVH, or a motion with --character) onto the robot MODEL with GMR's
    inverse kinematics: GMR's numbers with --like-gmr, its reported defects fixed without."""
    plan = plan_of(settings)
    refuse_source_as_output(out, source, character, source_model, *plan.inputs())
    if plot_errors:
        refuse_source_as_output(plot_errors, source, character, source_model, *plan.inputs())
    motion = api.read_motion(source, **({"character": character} if character else {}))
    if source_model:

        motion.skeleton = api.read_skeleton(source_model)
    result = plan.run(motion, progress=lambda frames: tqdm(
        frames, desc="retarget", unit="frame", delay=1.0, file=sys.stderr, disable=None))
    write_robot_motion(out, result.motion, to_format, plan, lossy)
    _report(out, result, plan.options.like_gmr)
    if plot_errors:
        from ..plot.tracking import save_tracking

        times = result.motion.tracks["joints"].timeline.times
        drawn = save_tracking(result.tracked, times, result.position_errors, plot_errors,
                              f"tracking error: {Path(source).name} onto {Path(plan.robot).name}")
        click.echo(f"drew {clean(drawn)}", err=True)


def _report(out: str, result: object, like_gmr: bool) -> None:
    from ..retarget import Retargeted

    assert isinstance(result, Retargeted)
    frames = result.motion.frames
    rate = result.motion.tracks["joints"].timeline.rate or 0.0
    height = f"source height {result.height:.3f} m" if result.height is not None else \
        "no source height (a map by name)"
    click.echo(f"{clean(out)}: {frames} frames at {rate:g} fps, {int(result.steps.sum())} IK "
               f"steps ({'GMR mode' if like_gmr else 'default mode'}; {height}; root shifted "
               f"{result.ground_shift * 1000:+.1f} mm)", err=True)
    if result.planted_frames:
        click.echo("feet held while planted: " + ", ".join(
            f"{clean(foot)} {count} frames" for foot, count in result.planted_frames.items()),
            err=True)
    if result.tracked:
        mean = result.position_errors.mean(axis=0) * 1000
        worst = np.argsort(mean)[::-1][:3]
        click.echo("tracking error (mean, mm): " + ", ".join(
            f"{clean(result.tracked[k])} {mean[k]:.1f}" for k in worst), err=True)
