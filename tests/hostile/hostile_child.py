"""Run one read in this (child) process and print one JSON line: outcome, CPU time, memory.

``python hostile_child.py SPEC`` where SPEC is JSON (or ``@file`` holding it): ``path``
plus ``module`` (a module under ``motionkit.formats`` whose ``read`` is called with
``options``), or ``pickle`` (the safe unpickler with the misc-data globals), or ``fuzz``
(a list of ``[module, path]`` pairs, each read in turn). The parent sets the memory limit.
Outcomes: ``ok``, ``motionkit`` (a MotionkitError, the family) or ``escape``.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import time
import warnings
from typing import Any


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _read(spec: dict[str, Any]) -> Any:
    if spec.get("pickle"):
        from motionkit.formats.shared.pickles import safepickle

        with open(spec["path"], "rb") as handle:
            data = handle.read()
        return safepickle.loads(data, spec["path"], "misc data", allowed=safepickle.MISC_GLOBALS)
    module = importlib.import_module(f"motionkit.formats.{spec['module']}")
    return module.read(spec["path"], **spec.get("options", {}))


def _one(spec: dict[str, Any]) -> dict[str, Any]:
    from motionkit.errors import MotionkitError

    try:
        _read(spec)
        return {"outcome": "ok"}
    except MotionkitError as exc:
        return {"outcome": "motionkit", "type": type(exc).__name__, "message": str(exc)[:300]}
    except BaseException as exc:  # the test asserts this never happens
        return {"outcome": "escape", "type": type(exc).__name__, "message": str(exc)[:300]}


def main() -> None:
    argument = sys.argv[1]
    if argument.startswith("@"):  # a long spec (a fuzz batch) comes in a file
        with open(argument[1:], encoding="utf-8") as handle:
            argument = handle.read()
    spec = json.loads(argument)
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(1000)
    import motionkit.formats.shared.pickles.safepickle  # noqa: F401  (imports before the baseline)
    from motionkit.formats import registry

    for info in registry.formats():
        info.load()
    base = _peak_kb()
    start = time.process_time()
    if "fuzz" in spec:
        escapes = []
        counts: dict[str, int] = {}
        for module, path in spec["fuzz"]:
            result = _one({"module": module, "path": path})
            counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
            if result["outcome"] == "escape":
                escapes.append({"module": module, "path": path, **result})
        report: dict[str, Any] = {"outcome": "fuzz", "escapes": escapes, "counts": counts}
    else:
        report = _one(spec)
    report.update(cpu_seconds=time.process_time() - start, peak_kb=_peak_kb(), base_kb=base)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
