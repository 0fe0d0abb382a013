"""``motionkit fk MODEL MOTION OUT``: world poses of every link (or one body) of a motion."""

from __future__ import annotations

import sys
import warnings

import click
from tqdm import tqdm

from .. import api
from ..errors import ConversionError, FormatError, MotionkitWarning, warn
from ..model.motion import Motion
from ..model.skeleton import Skeleton, World
from ..model.track import Track
from ._common import clean

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
    from ..kinematics.motion import link_poses

    skeleton = _skeleton(api.read(model), model, skeleton_name)
    source = api.read(motion)
    if not isinstance(source, Motion):
        raise FormatError("is a model, not a motion", motion)
    links = link_poses(skeleton, source, CHUNK, lambda starts: tqdm(
        starts, desc="fk", unit="chunk", delay=1.0, file=sys.stderr,
        disable=len(starts) <= 1))
    poses, frames = links.data, links.frames
    result = Motion(meta={"name": source.meta.get("name") or skeleton.name})
    if body_name is not None:
        try:
            index = skeleton.body_index(body_name)
        except KeyError:
            names = ", ".join(b.name for b in skeleton.bodies[:12])
            raise ConversionError(f"skeleton {skeleton.name!r} has no body {body_name!r} "
                                  f"(bodies: {names}…)") from None
        result.add(Track("root", "pose", poses[:, index], links.timeline, labels=[body_name]))
    else:
        result.skeleton = skeleton
        result.add(links)
        if "joints" in source.tracks:
            result.add(source.tracks["joints"])
    with warnings.catch_warnings():
        warnings.simplefilter("always", MotionkitWarning)
        if lossy:
            api.write(out, result, lossy=True)
        else:
            api.write(out, result)
    click.echo(f"{clean(out)}: {frames} frames, "
               f"{1 if body_name else len(skeleton.bodies)} pose(s) per frame", err=True)


def _skeleton(obj: object, path: str, name: str | None) -> Skeleton:
    if isinstance(obj, Skeleton):
        return obj
    if isinstance(obj, World):
        candidates = [s for s in obj.skeletons if s.bodies]
        if name is not None:
            candidates = [s for s in obj.skeletons if s.name == name]
        if not candidates:
            raise FormatError("no skeleton " + (repr(name) if name else "with bodies"), path)
        if len(candidates) > 1 and name is None:
            best = max(candidates, key=lambda s: s.dof_count)
            warn(f"{path} has {len(candidates)} skeletons; using {best.name!r} "
                 "(choose with --skeleton)")
            return best
        return candidates[0]
    raise FormatError("is not a model (no skeleton)", path)
