from typing_extensions import Buffer

SHAPE_INTS: int
SHAPE_DOUBLES: int
SEARCH_STEPS: int

def frames(poses: Buffer, frames: int, bodies: int, parents: Buffer, shape_ints: Buffer,
           shape_doubles: Buffer, shapes: int, height: float, hf: Buffer | None, nx: int, ny: int,
           ox: float, oy: float, dx: float, dy: float, steps: Buffer, largest: bool, fps: float,
           contact_speed: float, contact_height: float, lowest: Buffer | None,
           origin_low: Buffer | None, body: Buffer | None, joint: Buffer | None,
           contacts: Buffer | None) -> None: ...
def gaps(poses: Buffer, frames: int, bodies: int, shape_ints: Buffer, shape_doubles: Buffer,
         shapes: int, pairs: Buffer, count_pairs: int, first: int, stride: int, count: int,
         near: float, least: Buffer, where: Buffer, closest: Buffer) -> None: ...
def soles(poses: Buffer, frames: int, bodies: int, foot: int, points: Buffer, radii: Buffer,
          count: int, height: float, hf: Buffer | None, nx: int, ny: int, ox: float, oy: float,
          dx: float, dy: float, skate_height: float, planted: Buffer, step: Buffer,
          broken: Buffer) -> None: ...
