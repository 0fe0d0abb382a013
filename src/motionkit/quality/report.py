"""What ``check`` finds: one result per check, and the report of a motion."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
#: The agreement a report gives when the file holds no contacts to compare the labels with
#: (none, or not one column per body: a note says which), so that it says so.
NO_FILE_CONTACTS: dict[str, object] = {
    "agreement": None, "compared": 0,
    "note": "the file holds no contacts of these bodies: no agreement to report"}


@dataclass
class CheckResult:
    """One check: its measured ``value`` against ``threshold`` (``fails_above``: the
    check fails when the value is above the threshold, else when below), the first and
    worst frame, and every constant used. ``series`` is the per-frame value (what ``plot
    --kind check`` draws against ``series_threshold``), ``failing`` the failing frames."""

    name: str
    value: float
    threshold: float
    unit: str
    passed: bool
    fails_above: bool = True
    #: the check fails at the threshold too (a run of frames that reaches a length)
    inclusive: bool = False
    first_frame: int | None = None
    worst_frame: int | None = None
    constants: dict[str, float | str] = field(default_factory=dict)
    details: dict[str, object] = field(default_factory=dict)
    note: str = ""
    series: Array | None = field(default=None, repr=False)
    series_threshold: float | None = None
    failing: NDArray[np.bool_] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, object]:
        """Strict JSON (a number that is not finite is None), without the per-frame series."""
        return _strict({"name": self.name, "passed": self.passed, "value": self.value,
                "threshold": self.threshold, "unit": self.unit,
                "fails": "above" if self.fails_above else "below",
                "first_frame": self.first_frame, "worst_frame": self.worst_frame,
                "constants": self.constants, "details": self.details,
                **({"note": self.note} if self.note else {})})

    def line(self) -> str:
        """One line: verdict, value against threshold, frames, constants."""
        sign = (">" if self.fails_above else "<") + ("=" if self.inclusive else "")
        where = "" if self.first_frame is None else (
            f"; first frame {self.first_frame}, worst {self.worst_frame}")
        constants = ", ".join(f"{key}={_text(value)}" for key, value in self.constants.items())
        note = f" ({self.note})" if self.note else ""
        return (f"{'ok  ' if self.passed else 'FAIL'} {self.name}: {_text(self.value)} {self.unit}"
                f" (fails {sign} {_text(self.threshold)}){where}"
                f"{'; ' + constants if constants else ''}{note}")


@dataclass
class CheckReport:
    """Every check of one motion. ``verdict`` is ``pass`` or ``fail:<check>`` (the first
    failing check in the preset's order; with an unordered preset every failing check is
    listed in ``failed``, and their order does not change the verdict's meaning)."""

    name: str
    preset: str
    fps: float
    frames: int
    ground: dict[str, object]
    results: list[CheckResult]
    contacts: NDArray[np.bool_] | None = field(default=None, repr=False)
    body_names: list[str] = field(default_factory=list)
    contact_agreement: dict[str, object] | None = None
    notes: list[str] = field(default_factory=list)
    contact_rule: dict[str, object] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    @property
    def failed(self) -> list[str]:
        return [result.name for result in self.results if not result.passed]

    @property
    def verdict(self) -> str:
        failed = self.failed
        return "pass" if not failed else f"fail:{failed[0]}"

    def result(self, name: str) -> CheckResult:
        """The result of the check called ``name``."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def to_dict(self) -> dict[str, object]:
        """Strict JSON (``check --json``): every number that is not finite is None."""
        out: dict[str, object] = {
            "name": self.name, "preset": self.preset, "verdict": self.verdict,
            "passed": self.passed, "failed": self.failed, "fps": self.fps,
            "frames": self.frames, "ground": self.ground,
            "checks": [result.to_dict() for result in self.results]}
        if self.contacts is not None:
            out["contact_rule"] = self.contact_rule
            out["contact_frames"] = dict(zip(self.body_names,
                                             (int(n) for n in self.contacts.sum(axis=0)),
                                             strict=True))
        if self.contacts is not None:
            out["contact_agreement"] = self.contact_agreement or NO_FILE_CONTACTS
        if self.notes:
            out["notes"] = self.notes
        return _strict(out)

    def lines(self) -> list[str]:
        """The report as text: a header, the ground, one line per check, the notes."""
        head = (f"{self.name}: {self.verdict} ({self.frames} frames at {self.fps:g} fps, "
                f"preset {self.preset})")
        out = [head, f"  ground: {self.ground['source']}"]
        out += [f"  {result.line()}" for result in self.results]
        if self.contact_rule:
            rule = self.contact_rule
            out.append(f"  contacts: speed < {rule['speed_mps']} m/s and height < "
                       f"{rule['height_m']} m ({rule['speed']}; {rule['height']})")
        if self.contact_agreement is not None:
            agreement = self.contact_agreement
            out.append(f"  contacts: agree with the file's on {_text(agreement['agreement'])} "
                       f"of {agreement['compared']} (frame, body) labels")
        elif self.contacts is not None:
            out.append(f"  contacts: {NO_FILE_CONTACTS['note']}")
        out += [f"  note: {note}" for note in self.notes]
        return out

    def catalog_row(self) -> dict[str, object]:
        """A flat row for a catalog: ``check.ok``, ``check.verdict``, and per check its
        value and pass flag (``check.<name>`` and ``check.<name>.ok``)."""
        row: dict[str, object] = {"check.ok": self.passed, "check.verdict": self.verdict,
                                  "check.preset": self.preset}
        for result in self.results:
            row[f"check.{result.name}"] = _number(result.value)
            row[f"check.{result.name}.ok"] = result.passed
        return row


def _number(value: float) -> float | None:
    """A float for JSON (None for NaN; infinities stay, as ``json`` spells them)."""
    return None if value != value else float(value)


def _strict(value: dict[str, object]) -> dict[str, object]:
    """``value`` with every float that is not finite, at any depth, made None (JSON has
    no NaN or infinity)."""
    def clean(item: object) -> object:
        if isinstance(item, float):
            return item if math.isfinite(item) else None
        if isinstance(item, dict):
            return {key: clean(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [clean(inner) for inner in item]
        return item
    return {key: clean(item) for key, item in value.items()}


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
