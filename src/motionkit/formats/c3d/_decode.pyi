from typing import Any

def decode(raw: Any, frames: int, markers: int, words: int, kind: int, analog_at: int,
           channels: int, samples: int, point_factor: float, residual_factor: float,
           offsets: Any, factors: Any, xyz: Any, residual: Any, analog: Any, first: int,
           total: int) -> None: ...
