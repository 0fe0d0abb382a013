"""``motionkit plot FILE... -o OUT``: trajectories, joint tracks or terrain as a PNG, SVG or PDF."""

from __future__ import annotations

import click

from ..plot import KINDS
from .eval import ALIGN


@click.command("plot")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The picture to write: .png, .svg or .pdf.")
@click.option("--kind", type=click.Choice(KINDS), default="auto", show_default=True,
              help="Panels: trajectories (top view, xyz, rpy), joint tracks, terrain + root path, "
                   "check (each quality check over time; --model).")
@click.option("--joints", help="Comma-separated joint labels to draw (with --kind joints).")
@click.option("--model", type=click.Path(dir_okay=False),
              help="A model (.body, .skel, …) naming a file's unlabelled joint columns; "
                   "the model checked with --kind check.")
@click.option("--ref", "reference", type=click.Path(dir_okay=True), metavar="FILE",
              help="A reference trajectory, drawn first (as evo_traj --ref).")
@click.option("--align", "alignment", type=ALIGN, default="none", show_default=True,
              help="Fit each FILE onto --ref first, as eval does (stamps matched as eval).")
def command(files: tuple[str, ...], output: str, kind: str, joints: str | None,
            model: str | None, reference: str | None, alignment: str) -> None:
    """Draw FILE(s): trajectories overlaid, a file's joint values, or its terrain (needs
    motionkit[plot]). Same input, same bytes.

    \b
    Examples:
      motionkit plot groundtruth.tum estimate.tum -o paths.png
      motionkit plot orb.tum sptam.tum --ref groundtruth.tum --align se3 -o aligned.png
      motionkit plot SR1WalkPattern1.seq --model SR1.body --joints RLEG_HIP_P,RLEG_KNEE -o knee.svg
      motionkit plot motion.pkl --kind terrain -o terrain.pdf
      motionkit plot run.pkl --kind check --model humanoid.xml -o run_check.png
    """
    from ..plot import plot, save

    chosen = [j.strip() for j in joints.split(",") if j.strip()] if joints else None
    if chosen and kind == "auto":
        kind = "joints"
    figure = plot(*files, kind=kind, joints=chosen, model=model, ref=reference, align=alignment)
    click.echo(f"wrote {save(figure, output)}", err=True)
