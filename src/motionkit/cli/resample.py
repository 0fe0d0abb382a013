"""``motionkit resample``: put every track on a uniform rate."""

from __future__ import annotations

import click

from ..ops import METHODS
from .convert import run


@click.command(epilog="""\b
Examples:
  motionkit resample walk.seq walk_100hz.seq --rate 100
  motionkit resample stamped.seq uniform.seq --rate 30 --method choreonoid
  motionkit resample run.traj run_10hz.traj --rate 10 --method hold""")
@click.argument("source", type=click.Path(dir_okay=True))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--rate", type=float, required=True, help="Target rate in Hz.")
@click.option("--method", type=click.Choice(METHODS), default="linear", show_default=True,
              help="linear (slerp for rotations), hold, nearest, or choreonoid "
                   "(Choreonoid's own timed-frame rule: frame int(t*rate), hold, later wins).")
@click.option("--to", "to_format", metavar="FORMAT", help="Write TARGET as this format.")
@click.option("--lossy", is_flag=True, help="Drop what the target cannot hold (with a warning).")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A writer option, e.g. -O version=4.")
@click.option("--in-place", is_flag=True, help="Allow TARGET to be SOURCE itself (replaced).")
def command(source: str, target: str, rate: float, method: str, to_format: str | None,
            lossy: bool, options: tuple[str, ...], in_place: bool) -> None:
    """Resample SOURCE to a uniform RATE and write TARGET."""
    run(source, target, None, to_format, rate, method, None, lossy, options, None, in_place)
