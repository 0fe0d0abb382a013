"""``motionkit fk MODEL MOTION OUT``: world poses of every link (or one body) of a motion."""

from __future__ import annotations

import sys
import warnings

import click
from tqdm import tqdm

from .. import api
from ..errors import MotionkitWarning
from ._common import clean, refuse_source_as_output

CHUNK = 20_000


@click.command("fk")
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("motion", type=click.Path())
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--body", "body_name", help="Write only this body's pose (a trajectory).")
@click.option("--skeleton", "skeleton_name", help="Which skeleton of a multi-skeleton world.")
@click.option("--lossy", is_flag=True, help="Let the writer drop what OUT cannot hold.")
def command(model: str, motion: str, out: str, body_name: str | None,
            skeleton_name: str | None, lossy: bool) -> None:
    """Forward kinematics: MODEL (.skel, .body, …) + MOTION (joint values) → link poses.

    \b
    Examples:
      motionkit fk SR1.body SR1WalkPattern1.seq links.seq
      motionkit fk SR1.body SR1WalkPattern1.seq foot.traj --body RLEG_ANKLE_R
    """
    from ..kinematics.motion import link_motion

    refuse_source_as_output(out, model, motion)
    skeleton = api.read_skeleton(model, skeleton_name)
    source = api.read_motion(motion)
    result = link_motion(skeleton, source, body_name, chunk=CHUNK, progress=lambda starts: tqdm(
        starts, desc="fk", unit="chunk", delay=1.0, file=sys.stderr, disable=len(starts) <= 1))
    with warnings.catch_warnings():
        warnings.simplefilter("always", MotionkitWarning)
        api.write(out, result, lossy=lossy)
    click.echo(f"{clean(out)}: {result.frames} frames, "
               f"{1 if body_name else len(skeleton.bodies)} pose(s) per frame", err=True)
