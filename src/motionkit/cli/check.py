"""``motionkit check``: motion quality checks and contact labels, one report per file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .. import api
from ..errors import MotionkitError
from ._common import clean, echo_json, parse_options, read_option, refuse_source_as_output

if TYPE_CHECKING:
    from ..model.motion import Motion
    from ..model.skeleton import Skeleton
    from ..quality import CheckReport
    from ..quality.fix import Fixed


@click.command("check", epilog="""\b
Examples:
  motionkit check walk.pkl --character humanoid.xml
  motionkit check motions/*.pkl --character humanoid.xml --preset protomotions
  motionkit check g1_walk.pkl --model g1.xml --ground auto --json
  motionkit check walk.csv --from g1csv-kimodo --model g1.xml -T body_speed=10
  motionkit check run.pkl --character humanoid.xml --fix run_fixed.pkl
\b
Exit status: 0 when every file passes, 1 when a check fails, 2 on an error.
With --fix, the fixed copy's check decides it (0 when the fixed copy passes,
even if the original failed); both verdicts are printed. --fix writes the copy
as `motionkit fix` does (every fix; see its --help for --only, --max-spike).""")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--model", "--character", "model", type=click.Path(exists=True, dir_okay=False),
              help="The model (MJCF, URDF, .skel, .body, PARC character) the motions are of.")
@click.option("--preset", type=click.Choice(["default", "protomotions"]), default="default",
              show_default=True, help="The constants and rules (protomotions: its filters).")
@click.option("--ground", metavar="Z|auto|terrain|hf",
              help="A flat ground at height Z (m); auto: from the clip's lowest frames; "
                   "terrain: the file's terrain (the default where it has one; PARC's pinned "
                   "heights); hf: the terrain's heights as stored.")
@click.option("--feet", metavar="BODY,BODY", help="The foot bodies (default: the lowest at rest).")
@click.option("-T", "--threshold", "thresholds", multiple=True, metavar="NAME=VALUE",
              help="Replace one constant, e.g. -T body_speed=10 -T contact_height=0.08.")
@click.option("--from", "from_format", metavar="FORMAT", help="Read as this format.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.option("--fix", "fix_out", type=click.Path(dir_okay=False),
              help="Write a fixed copy (spikes refilled, joints clipped, lifted onto the "
                   "ground) here and check it again (one input file; the exit status is "
                   "then the fixed copy's).")
@click.option("--contacts", "contacts_out", type=click.Path(dir_okay=False),
              help="Write the motion with its contacts track made from the labels here "
                   "(one input file; the file's own contacts are replaced).")
@click.option("--lossy", is_flag=True,
              help="With --fix/--contacts: let the writer drop what it cannot hold.")
@read_option
def command(files: tuple[str, ...], model: str | None, preset: str, ground: str | None,
            feet: str | None, thresholds: tuple[str, ...], from_format: str | None,
            as_json: bool, fix_out: str | None, contacts_out: str | None, lossy: bool,
            read_options: tuple[str, ...]) -> None:
    """Check motion quality: below ground, floating, speed spikes, joint limits, foot
    skating, self-penetration, quaternions and timing; label contacts. Every constant
    used is printed beside its result."""
    from ..formats import registry
    from ..quality import check
    from ..quality.options import check_options

    _check_outputs(files, fix_out, contacts_out, model)
    options = parse_options(thresholds)
    skeleton = api.read_skeleton(model) if model else None
    feet_names = tuple(name.strip() for name in feet.split(",")) if feet else None
    check_options(preset, ground, skeleton, feet_names, **options)  # one line, not per file
    documents: list[dict[str, object]] = []
    failed, errors = 0, 0
    for path in files:
        try:
            reader = registry.for_reading(path, from_format)
            extra = {**reader.reader_options(character=model), **parse_options(read_options)}
            motion = api.read_motion(path, format=reader.name, **extra)
            report = check(motion, skeleton, ground=ground, preset=preset,
                           feet_names=feet_names, name=path, **options)
        except (MotionkitError, OSError, ValueError) as exc:
            errors += 1
            click.echo(f"motionkit: error: {clean(' '.join(str(exc).split()))}", err=True)
            continue
        failed += not report.passed
        documents.append(report.to_dict())
        if not as_json:
            click.echo("\n".join(clean(line) for line in report.lines()))
        if contacts_out is not None:
            _write_contacts(contacts_out, motion, report, lossy, as_json)
        if fix_out is not None:
            fixed, again = _write_fixed(fix_out, motion, skeleton, model, lossy, as_json,
                                        ground=ground, preset=preset, feet_names=feet_names,
                                        **options)
            # as fix --json: the fixes made and what was left alone, beside the copy's report
            documents.append({**again.to_dict(), "fixes": fixed.fixes, "left": fixed.left})
            # the fixed copy decides the status: the original's failures are what --fix
            # was asked to repair, and both verdicts are printed
            failed = int(not again.passed)
            if not as_json:
                click.echo(f"verdicts: original {clean(path)}: {report.verdict}; fixed copy "
                           f"{clean(fix_out)}: {again.verdict} (the exit status follows the "
                           "fixed copy)")
    if as_json:
        echo_json(documents)
    if errors:
        sys.exit(2)
    if failed:
        sys.exit(1)


def _check_outputs(files: tuple[str, ...], fix_out: str | None, contacts_out: str | None,
                   model: str | None) -> None:
    """--fix and --contacts: one input, never over it or the model, two different files."""
    for out in (fix_out, contacts_out):
        if out is not None:
            if len(files) != 1:
                raise MotionkitError("--fix and --contacts take one input file")
            refuse_source_as_output(out, files[0], model)
    if fix_out is not None and contacts_out is not None and _same_file(fix_out, contacts_out):
        raise MotionkitError(f"--fix and --contacts name the same file ({clean(fix_out)}); "
                             "the fixed copy would replace the labelled one: give two paths")


def _same_file(a: str, b: str) -> bool:
    """Whether two output paths name one file (another spelling, a link to it)."""
    import os
    from pathlib import Path

    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return Path(a).resolve() == Path(b).resolve()


def _write_contacts(target: str, motion: Motion, report: CheckReport, lossy: bool,
                    quiet: bool) -> None:
    """--contacts: the motion with its ``contacts`` track made from the report's labels."""
    from ..model.motion import Motion
    from ..quality import contact_track

    labelled = Motion(dict(motion.tracks), motion.skeleton, motion.terrain, dict(motion.meta))
    labelled.add(contact_track(report, motion))
    api.write(target, labelled, lossy=lossy)
    if not quiet:
        click.echo(f"  wrote {clean(target)} with the contact labels")


def _write_fixed(target: str, motion: Motion, skeleton: Skeleton | None, model: str | None,
                 lossy: bool, quiet: bool, *, ground: str | None, preset: str,
                 feet_names: tuple[str, ...] | None, **thresholds: Any,
                 ) -> tuple[Fixed, CheckReport]:
    """--fix: the fixed motion written to ``target`` (as ``motionkit fix`` writes it), what
    was fixed, and its check (printed unless quiet). ``thresholds`` are -T's parsed
    values (``parse_options``), checked by ``Preset.with_options``."""
    from .fix import fix_lines, fix_summary

    fixed, again = api.write_fixed(target, motion, skeleton, model=model, lossy=lossy,
                                   ground=ground, preset=preset, feet_names=feet_names,
                                   **thresholds)
    if not quiet:
        click.echo("\n".join([f"  fix: {fix_summary(fixed)}", *fix_lines(fixed)]))
        click.echo("\n".join(clean(line) for line in again.lines()))
    return fixed, again
