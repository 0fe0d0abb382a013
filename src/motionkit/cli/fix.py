"""``motionkit fix``: a fixed copy of a motion (spikes refilled, joints clipped into their
limits, lifted onto the ground), each fix listed in the copy's metadata; ``check --fix``
and ``batch fix`` write their copies through the same ``api.write_fixed``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .. import api
from ..errors import MotionkitError
from ..quality.fix import FIXES, SPIKE_TIME, check_fixes
from ._common import (
    clean,
    echo_json,
    parse_options,
    read_option,
    refuse_source_as_output,
    written_line,
)

if TYPE_CHECKING:
    from ..quality.fix import Fixed


@click.command("fix", epilog="""\b
Examples:
  motionkit fix run.pkl run_fixed.pkl --character humanoid.xml
  motionkit fix walk.pkl walk_fixed.pkl --model g1.xml --only lift,limits
  motionkit fix walk.pkl walk_fixed.pkl --model g1.xml --preset protomotions --json
  motionkit fix walk.pkl walk_fixed.pkl --model g1.xml --to mimickit --lossy -T body_speed=10
  motionkit batch fix 'runs/*.pkl' --out fixed --character humanoid.xml
\b
The fixes: spikes (runs of frames out of line, up to --max-spike long, after
which the motion comes back to where it was going, are filled again from the
frames either side; a jump that does not come back is a step and left alone),
limits (joint values clipped into the model's ranges), lift (the clip moved so
that its lowest shape point touches the ground). Frames that are not numbers
are refused by name. Each fix made is printed and listed in TARGET's metadata
(quality_fixes), which TARGET's format must hold (else --lossy); then the fixed
copy is checked and its verdict printed. -O takes the writer's options only.
TARGET is never SOURCE.
\b
Exit status: 0 when the copy is written (whatever its check says), 2 on an error.""")
@click.argument("source", type=click.Path(dir_okay=True))
@click.argument("target", type=click.Path())
@click.option("--model", "--character", "model", type=click.Path(exists=True, dir_okay=False),
              help="The model (MJCF, URDF, .skel, .body, PARC character) the motion is of.")
@click.option("--only", metavar="FIX,FIX", help=f"Make only these fixes, of {', '.join(FIXES)} "
                                                 "(default: all three, in that order).")
@click.option("--max-spike", type=float, default=SPIKE_TIME, show_default=True,
              metavar="SECONDS",
              help="The longest run of frames refilled as one spike (at least one frame).")
@click.option("--preset", type=click.Choice(["default", "protomotions"]), default="default",
              show_default=True, help="The check constants the fixes measure with.")
@click.option("--ground", metavar="Z|auto|terrain|hf", help="The ground, as check --ground.")
@click.option("--feet", metavar="BODY,BODY",
              help="The foot bodies of the fixed copy's check, as check --feet.")
@click.option("-T", "--threshold", "thresholds", multiple=True, metavar="NAME=VALUE",
              help="Replace one check constant, e.g. -T body_speed=10.")
@click.option("--from", "from_format", metavar="FORMAT", help="Read SOURCE as this format.")
@click.option("--to", "to_format", metavar="FORMAT", help="Write TARGET as this format.")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A writer option, e.g. -O precision=9.")
@read_option
@click.option("--lossy", is_flag=True, help="Drop what TARGET cannot hold (with a warning).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def command(source: str, target: str, model: str | None, only: str | None, max_spike: float,
            preset: str, ground: str | None, feet: str | None, thresholds: tuple[str, ...],
            from_format: str | None, to_format: str | None, options: tuple[str, ...],
            read_options: tuple[str, ...], lossy: bool, as_json: bool) -> None:
    """Write a fixed copy of SOURCE to TARGET: spikes refilled, joint values clipped into
    their limits, the clip lifted onto the ground; each fix made is printed."""
    from ..formats import registry
    from ..quality.options import check_options

    refuse_source_as_output(target, source, model)
    fixes = parse_fixes(only)
    check_fixes(fixes, max_spike)
    limits = parse_options(thresholds)
    skeleton = api.read_skeleton(model) if model else None
    feet_names = tuple(name.strip() for name in feet.split(",")) if feet else None
    check_options(preset, ground, skeleton, feet_names, **limits)  # before SOURCE is read
    reader = registry.for_reading(source, from_format)
    extra = {**reader.reader_options(character=model), **parse_options(read_options)}
    motion = api.read_motion(source, format=reader.name, **extra)
    say = written_line(target)
    fixed, again = api.write_fixed(target, motion, skeleton, model=model, fixes=fixes,
                                   max_spike=max_spike, format=to_format, lossy=lossy,
                                   write_options=parse_options(options), ground=ground,
                                   preset=preset, feet_names=feet_names, **limits)
    if as_json:
        echo_json({"source": source, "target": target, "fixes": fixed.fixes,
                   "left": fixed.left, "fixed_check": {"verdict": again.verdict,
                                                       "failed": again.failed,
                                                       "ground": again.ground["source"]}})
        return
    click.echo(f"{clean(source)}: {fix_summary(fixed)}")
    for line in fix_lines(fixed):
        click.echo(line)
    click.echo(f"  check of the fixed copy: {again.verdict}"
               + (f" (failing: {', '.join(again.failed)})" if again.failed else ""))
    click.echo(say())


def parse_fixes(only: str | None) -> tuple[str, ...]:
    """``--only``'s fixes in their order of :data:`FIXES` (all without it); a name that is
    not a fix is one line."""
    if only is None:
        return FIXES
    names = tuple(name.strip() for name in only.split(",") if name.strip())
    if not names:
        raise MotionkitError(f"--only names no fix (of {', '.join(FIXES)})")
    check_fixes(names)
    return tuple(name for name in FIXES if name in names)


def fix_summary(fixed: Fixed) -> str:
    """``nothing to fix`` when no fix was made (whatever was left alone), else how many
    were: the one rule of ``fix`` and ``check --fix``."""
    return f"{len(fixed.fixes)} fix(es)" if fixed.fixes else "nothing to fix"


def fix_lines(fixed: Fixed) -> list[str]:
    """What a fix did, one line each: ``fixed: …`` per fix made, ``left: …`` per thing
    found and left alone."""
    return [f"  fixed: {clean(line)}" for line in fixed.fixes] + [
        f"  left: {clean(line)}" for line in fixed.left]
