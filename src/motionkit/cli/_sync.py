"""The options of ``convert --fps`` that put several tracks on one clock: each is passed
to :func:`motionkit.ops.sync` (the rules live there; this only reads the command line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import click

from ..errors import ConversionError
from ..model import Motion
from ..ops.sync import ACTIONS, GAP_ACTIONS, SYNC_METHODS, pieces, sync, with_action

T = TypeVar("T")
#: What ``--on-gap`` takes: ops.sync's actions, and ``split`` (drop, then cut at the gaps).
GAPS = (*GAP_ACTIONS, "split")

#: What the epilog of ``convert`` shows for them.
EXAMPLES = """\
  motionkit convert run.mcap:/joint_states,/tf:world->base_link,/cmd out/ --to lerobot \\
      --fps 30 -O task="pick the cube" -O state=/joint_states -O action=/cmd
  motionkit convert run.bag:/joint_states out/ --to lerobot --fps 30 -O task=reach \\
      --action next          (one topic: track joints, observation.state; action[k] = state[k+1])
  motionkit convert run.bag:/joint_states,/cmd run.seq --fps 50 --start +0.5 --end +1.5 \\
      --sync-method /cmd=nearest --tolerance /cmd=0.05 --on-gap drop
  motionkit convert run.bag:/joint_states out/ --to lerobot --fps 30 -O task=reach \\
      --on-gap split         (an episode per stretch between the gaps)"""


def options(func: Callable[..., None]) -> Callable[..., None]:
    """The sync options, after ``--fps``."""
    for option in reversed((
        click.option("--start", metavar="TIME",
                     help="With --fps: the first frame, in seconds on the source's clock, or "
                          "+S seconds after the latest first sample (default: that sample)."),
        click.option("--end", metavar="TIME",
                     help="With --fps: the last frame at or before TIME (seconds, or +S "
                          "after the latest first sample; default: the earliest last sample)."),
        click.option("--sync-method", "sync_methods", multiple=True, metavar="[TRACK=]METHOD",
                     help=f"With --fps: {'|'.join(SYNC_METHODS)} for TRACK (repeat it), or "
                          "for every track (default: hold for commands, else linear/slerp)."),
        click.option("--tolerance", "tolerances", multiple=True, metavar="[TRACK=]SECONDS",
                     help="With --fps: how far a sample used may lie from a frame, for TRACK "
                          "or all (default 1.5 of each track's median period)."),
        click.option("--on-gap", type=click.Choice(GAPS), default="fail",
                     show_default=True,
                     help="With --fps: a frame in a track's gap fails the conversion, is "
                          "dropped, or splits the recording there (each stretch between gaps "
                          "an episode of one dataset: --to lerobot)."),
        click.option("--action", metavar="HOW[:TRACK]",
                     help=f"With --fps: add an 'action' track from the state ({'|'.join(ACTIONS)}:"
                          " the next frame's state, or the step to it), from TRACK or the "
                          "-O state= track (else 'joints')."),
    )):
        func = option(func)
    return func


@dataclass(frozen=True)
class SyncOptions:
    """What the command line asked of the sync."""

    start: str | None = None
    end: str | None = None
    sync_methods: tuple[str, ...] = ()
    tolerances: tuple[str, ...] = ()
    on_gap: str = "fail"
    action: str | None = None

    @property
    def given(self) -> bool:
        return any((self.start, self.end, self.sync_methods, self.tolerances,
                    self.on_gap != "fail", self.action))

    def apply(self, motion: Motion, fps: float, zero: bool, state: str | None) -> list[Motion]:
        """``motion`` on one clock as asked (and its action, where asked): one motion, or
        with ``--on-gap split`` one per stretch between the gaps (an action never steps
        over a gap)."""
        method, methods = _per_track(self.sync_methods, "--sync-method", str)
        tolerance, tolerances = _per_track(self.tolerances, "--tolerance", _seconds)
        if tolerance is not None and tolerances:
            raise ConversionError("--tolerance: give one for all tracks or one per track, "
                                  "not both")
        synced = sync(motion, fps, methods=methods, method=method, start=_time(self.start),
                      end=_time(self.end), tolerance=tolerances or tolerance,
                      on_gap="drop" if self.on_gap == "split" else self.on_gap, zero=zero)
        cut = pieces(synced) if self.on_gap == "split" else [synced]
        if self.action is None:
            return cut
        how, _, track = self.action.partition(":")
        return [with_action(piece, how, track or state or "joints") for piece in cut]


#: No sync option given.
NONE = SyncOptions()


def _per_track(pairs: Iterable[str], option: str, value: Callable[[str], T],
               ) -> tuple[T | None, dict[str, T]]:
    """``TRACK=VALUE`` pairs (the last ``=``: track names may hold one) and one bare VALUE."""
    every: T | None = None
    per: dict[str, T] = {}
    for pair in pairs:
        track, sep, text = pair.rpartition("=")
        if not sep:
            if every is not None:
                raise ConversionError(f"{option} without a track is given twice")
            every = value(text)
        elif not track:
            raise ConversionError(f"{option} {pair!r}: name a track before '='")
        else:
            per[track] = value(text)
    return every, per


def _seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConversionError(f"--tolerance {text!r} is not a number of seconds") from None


def _time(text: str | None) -> float | str | None:
    """Seconds, or ``+S`` passed on for sync to read."""
    if text is None or text.strip().startswith("+"):
        return text
    try:
        return float(text)
    except ValueError:
        raise ConversionError(f"{text!r} is not a time (seconds, or +S after the latest "
                              "first sample)") from None
