"""``motionkit view FILE...``: a 3D view in the browser, live on 127.0.0.1 or one HTML file."""

from __future__ import annotations

import sys

import click

from ._common import clean, refuse_source_as_output


@click.command("view")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--model", type=click.Path(dir_okay=False),
              help="The robot or character (.body, .skel, .xml) for files of joint values.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False),
              help="Write one self-contained page that plays offline, instead of serving.")
@click.option("--rrd", "rrd_out", type=click.Path(dir_okay=False),
              help="Write a rerun recording (.rrd: link transforms, shapes, paths on rerun's "
                   "'time' timeline; needs motionkit[rerun]) instead of serving.")
@click.option("--ape", is_flag=True,
              help="With --rrd: each later file's absolute position error (m, nearest stamps, "
                   "no alignment) against the first, on the same timeline.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="Port of the live view (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on; anything but loopback shows your files to the network.")
def command(files: tuple[str, ...], model: str | None, html_out: str | None, rrd_out: str | None,
            ape: bool, port: int, host: str) -> None:
    """Show FILE(s) in 3D with a time slider and play/pause/speed (needs motionkit[view]):
    skeletons (through --model for joint values), root paths, trajectories with their frames,
    terrain; several files side by side.

    \b
    Examples:
      motionkit view SR1WalkPattern1.seq --model SR1.body
      motionkit view SR1WalkPattern1.seq --model SR1.body --html walk.html
      motionkit view groundtruth.tum estimate.tum --port 8090
      motionkit view SR1WalkPattern1.seq --model SR1.body --rrd walk.rrd
    """
    if rrd_out:
        _rrd(files, model, rrd_out, html_out, ape)
        return
    if ape:
        raise click.UsageError("--ape goes with --rrd")
    from tqdm import tqdm

    from ..view import LiveView, build_scene, write_html
    from ..view.scene import stages

    if html_out:
        refuse_source_as_output(html_out, *files, model)
    with tqdm(total=stages(len(files), model is not None), desc="view", unit="stage", delay=1.0,
              file=sys.stderr, leave=False) as bar:
        def done(what: str) -> None:
            bar.set_postfix_str(clean(what), refresh=False)  # names come from files
            bar.update()

        scene = build_scene(*files, model=model, progress=done)
        if html_out:
            bar.total = bar.n + len(scene.actors) + 2  # the page: each actor, packing, writing
            path = write_html(scene, html_out, progress=done)
    if scene.note:
        click.echo(scene.note, err=True)
    if html_out:
        click.echo(f"wrote {path}", err=True)
        return
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host}: other machines that reach it can see these files",
                   err=True)
    live = LiveView(scene, host, port)
    click.echo(f"motionkit view: open {live.url} (Ctrl+C stops)", err=True)
    try:
        live.wait()
    finally:
        live.stop()


def _rrd(files: tuple[str, ...], model: str | None, rrd_out: str, html_out: str | None,
         ape: bool) -> None:
    """``view --rrd``: every frame of every file (no subsampling) as a rerun recording, with
    each later file's APE against the first (``--ape``)."""
    from pathlib import Path

    from ..errors import MotionkitError
    from ..view import build_scene
    from ..view.rrd import write_rrd

    if html_out:
        raise MotionkitError("give --html or --rrd, not both")
    refuse_source_as_output(rrd_out, *files, model)
    # with --ape the files' stamps are one clock: the errors and the poses drawn share it
    scene = build_scene(*files, model=model, max_link_poses=sys.maxsize, one_origin=ape)
    errors = {}
    if ape:
        from .. import evaluation

        if len(files) < 2:
            raise MotionkitError("--ape needs a reference and at least one estimate")
        reference = evaluation.read_poses(files[0])
        for path in files[1:]:
            result = evaluation.ape(reference, evaluation.read_poses(path))
            origin = scene.origin if scene.origin is not None else reference.times[0]
            errors[f"ape {Path(path).name}"] = (result.t_ref - origin, result.errors)
    click.echo(f"wrote {clean(str(write_rrd(scene, rrd_out, errors)))}", err=True)
