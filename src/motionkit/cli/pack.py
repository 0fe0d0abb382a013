"""``motionkit pack``: a motion library in one memory-mappable file, and its check."""

from __future__ import annotations

import sys

import click

from ._common import busy
from .batch import printable


@click.command(epilog="""\b
Examples:
  motionkit pack motions/ -o lib.mkpack
  motionkit pack motion_list.yaml -o lib.mkpack --character humanoid.xml
  motionkit pack --check lib.mkpack""")
@click.argument("source", type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="LIB.mkpack",
              help="The pack to write.")
@click.option("--character", type=click.Path(exists=True, dir_okay=False),
              help="Character file that gives joints their meaning.")
@click.option("--check", is_flag=True,
              help="SOURCE is a pack: check its arrays and whether its source files changed.")
def command(source: str, output: str | None, character: str | None, check: bool) -> None:
    """Pack a folder of motions or a motion list (with its weights) into one file that
    ``MotionLib.load`` opens in milliseconds; --check says when its sources changed."""
    from ..dataset.pack import check_pack, pack

    if check:
        with busy(f"checking {source}"):
            problems = check_pack(source)
        for problem in problems:
            click.echo(printable(problem))
        if problems:
            unchecked = sum(problem.startswith("not checked") for problem in problems)
            changed = len(problems) - unchecked
            click.echo(f"{printable(source)}: {changed} change(s) since it was packed"
                       + (f", {unchecked} source(s) not checked" if unchecked else ""))
            sys.exit(2)
        click.echo(f"{printable(source)}: ok")
        return
    if output is None:
        raise click.UsageError("name the pack to write: -o LIB.mkpack")
    with busy(f"packing {source}"):
        lib = pack(source, output, character=character)
    click.echo(f"wrote {printable(output)} ({lib.num_motions} motions, "
               f"{int(lib.frame_counts.sum())} frames)")
