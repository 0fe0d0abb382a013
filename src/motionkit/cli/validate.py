"""``motionkit validate``: check files, one line per problem."""

from __future__ import annotations

import sys
import warnings

import click

from .. import api
from ..errors import MotionkitError
from ._common import clean, parse_options, progress, read_option


@click.command(epilog="""\b
Examples:
  motionkit validate walk.seq
  motionkit validate motions/*.seq
  motionkit validate run.pkl --character humanoid.xml""")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--character", type=click.Path(exists=True, dir_okay=False),
              help="Check motions against this character/model file.")
@click.option("--from", "from_format", metavar="FORMAT", help="Read as this format.")
@click.option("--strict", is_flag=True, help="Count warnings as problems too.")
@read_option
def command(files: tuple[str, ...], character: str | None, from_format: str | None,
            strict: bool, read_options: tuple[str, ...]) -> None:
    """Read each file completely; exit 0 when all are valid, 2 otherwise.

    Problems are printed as FILE:LINE:COLUMN: message (line and column where the
    format has lines); warnings are printed too.
    """
    options = parse_options(read_options)
    if character:
        options["character"] = character
    failed = 0
    for path in progress(list(files), "validating"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                api.read(path, format=from_format, **options)
                problem = None
            except MotionkitError as exc:
                problem = str(exc)
            except (OSError, ValueError, MemoryError, RecursionError) as exc:
                problem = f"{path}: {type(exc).__name__}: {exc}"
            except Exception as exc:  # a bug of ours: report it for this file, check the rest
                problem = f"{path}: internal error ({type(exc).__name__}: {exc}); please report it"

        for warning in caught:  # every message one line, escaped: no file can forge a line
            text = str(warning.message)
            click.echo(clean(text if text.startswith(path) else f"{path}: warning: {text}"))
        if problem is not None or (strict and caught):
            failed += 1
            if problem is not None:
                click.echo(clean(problem))
        else:
            click.echo(f"{clean(path)}: ok")
    if failed:
        click.echo(f"{failed} of {len(files)} file(s) invalid", err=True)
        sys.exit(2)
