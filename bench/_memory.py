"""Peak memory of the running process, for the benchmarks' worker processes."""

from __future__ import annotations


def peak_mb() -> float:
    """Peak resident memory (VmHWM) in MB, or NaN where /proc is not there."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
