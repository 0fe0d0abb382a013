"""The ``motionkit`` command: a thin layer over the library, one module per command."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Any

import click

from .._version import __version__
from ..errors import HINTS_ENV, MotionkitError, MotionkitWarning

#: Command modules; each defines a click command called ``command``.
COMMANDS = ("info", "validate", "check", "fix", "convert", "resample", "fk", "retarget", "eval",
            "plot", "view", "batch", "catalog", "pack", "formats")

EPILOG = """\b
Examples:
  motionkit formats                      (extensions, -R/-O options)
  motionkit info walk.seq
  motionkit info --json walk.seq
  motionkit validate motions/*.seq
  motionkit check walk.pkl --character humanoid.xml
  motionkit fix walk.pkl walk_fixed.pkl --character humanoid.xml
  motionkit convert walk.seq walk_v4.seq -O version=4
  motionkit resample stamped.seq uniform.seq --rate 100 --method linear
  motionkit info robot.skel
  motionkit fk SR1.body SR1WalkPattern1.seq links.seq
  motionkit retarget walk.bvh --robot g1.xml --map bvh_to_g1.json -o walk_g1.pkl --to gmr
  motionkit eval ape groundtruth.tum estimate.tum --align se3
  motionkit plot groundtruth.tum estimate.tum -o paths.png
  motionkit view SR1WalkPattern1.seq --model SR1.body --html walk.html
  motionkit batch convert 'motions/**/*.seq' --out converted --to traj -j 2
  motionkit catalog data/ -o catalog.parquet
  motionkit pack motions/ -o lib.mkpack
"""


class _Group(click.Group):
    """Loads command modules on demand, so ``motionkit --help`` stays quick."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                return None
            raise
        command: click.Command = module.command
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Ctrl-C becomes Abort here, so click prints nothing and ``main`` one line."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise click.exceptions.Abort() from None


@click.group(cls=_Group, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="motionkit")
@click.option("--debug", is_flag=True, help="Show the full traceback of an error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Read, write, check and convert robot and character motion files."""
    ctx.obj = {"debug": debug}


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    click.echo(f"warning: {_one_line(message)}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: one line on stderr and exit status 2 for any error, never a traceback."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    warnings.showwarning = _show_warning
    warnings.simplefilter("always", MotionkitWarning)
    before = os.environ.get(HINTS_ENV)
    os.environ[HINTS_ENV] = "cli"  # hints spelled for a command line (errors.option_hint)
    try:
        _main(argv, debug)
    finally:
        if before is None:
            os.environ.pop(HINTS_ENV, None)
        else:
            os.environ[HINTS_ENV] = before


def _main(argv: list[str] | None, debug: bool) -> None:
    try:
        code = cli.main(args=argv, prog_name="motionkit", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("motionkit: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"motionkit: {_one_line(exc.format_message())}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (MotionkitError, OSError, ValueError, MemoryError) as exc:
        if debug:
            raise
        click.echo(f"motionkit: error: {_one_line(exc)}", err=True)
        sys.exit(2)
    except Exception as exc:  # a bug of ours: still one line, but say so
        if debug:
            raise
        click.echo(f"motionkit: internal error ({type(exc).__name__}: {_one_line(exc)}); "
                   "rerun with --debug and report it", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def _one_line(exc: object) -> str:
    """The message on one line, control characters escaped (it may quote a file)."""
    from ._common import clean

    text = str(exc) or type(exc).__name__
    return clean(" ".join(text.split()))
