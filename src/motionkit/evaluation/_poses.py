"""The pose sequence every evaluation step works on, and how inputs become one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ..model import Motion, Track

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Poses:
    """Time-stamped 6-DoF poses: ``times (n,)`` s, ``positions (n, 3)``, unit ``quaternions
    (n, 4)`` x y z w. ``matrices (n, 3, 3)`` keeps rotations exactly as a file gave them
    (KITTI rows are not quite orthonormal; the KITTI metric uses them as is). ``oriented``
    is False for position-only inputs, whose identity quaternions no rotation metric may use."""

    times: Array
    positions: Array
    quaternions: Array
    name: str = ""
    matrices: Array | None = field(default=None, repr=False)
    oriented: bool = True

    def __len__(self) -> int:
        return int(self.times.shape[0])

    def take(self, index: NDArray[np.intp]) -> Poses:
        """The poses at ``index`` (in that order); ``self`` when that is all of them in order."""
        n = len(self)
        if len(index) == n and (n == 0 or (index[0] == 0 and index[-1] == n - 1
                                           and bool(np.all(np.diff(index) == 1)))):
            return self
        return Poses(self.times[index], self.positions[index], self.quaternions[index], self.name,
                     None if self.matrices is None else self.matrices[index], self.oriented)

    def part(self, block: slice) -> Poses:
        """A view of the poses in ``block``."""
        return Poses(self.times[block], self.positions[block], self.quaternions[block], self.name,
                     None if self.matrices is None else self.matrices[block], self.oriented)

    def need_orientation(self, what: str) -> None:
        """ConversionError when these poses are positions only (``what`` needs rotations)."""
        if not self.oriented:
            raise ConversionError(f"{self.name or 'an input'} holds positions only; {what} needs "
                                  "orientations (evaluate APE translation instead)")

    def rotation_matrices(self) -> Array:
        """(n, 3, 3) rotations: the file's own matrices when kept, else from the quaternions."""
        if self.matrices is not None:
            return self.matrices
        from ..spatial.quaternion import to_matrix

        return to_matrix(self.quaternions)


PoseInput = Motion | Track | Poses


def as_poses(source: PoseInput, name: str = "") -> Poses:
    """Poses of a motion's root, a pose track or ``Poses``; bad values are a ConversionError.

    Quaternions are normalised (as evo and trajectopy do on reading)."""
    if isinstance(source, Poses):
        poses = source
    else:
        track = source.root_pose() if isinstance(source, Motion) else source
        label = name or "input"
        if track is None:
            raise ConversionError(f"{label} has no root pose; evaluate a trajectory, bag topic or "
                                  "TF chain with a 'root' track")
        data = np.asarray(track.data, dtype=np.float64)
        if data.ndim != 2 or data.shape[1] != 7:
            raise ConversionError(f"{label}: the root track has shape {data.shape}, need (frames, 7) "
                                  "x y z qx qy qz qw")
        poses = Poses(np.asarray(track.times, dtype=np.float64), data[:, :3], data[:, 3:], name,
                      oriented=bool(track.attrs.get("orientation", True)))
    check(poses, name or poses.name or "input")
    norm = np.sqrt(np.einsum("ij,ij->i", poses.quaternions, poses.quaternions))
    unit = bool(np.all(np.abs(norm - 1.0) <= 1e-15))  # readers normalise already: no copy then
    return Poses(poses.times, poses.positions,
                 poses.quaternions if unit else poses.quaternions / norm[:, None], name or poses.name,
                 poses.matrices, poses.oriented)


def from_matrices(matrices: Array, times: Array | None = None, name: str = "") -> Poses:
    """Poses from (n, 3, 4) or (n, 4, 4) ``[R|t]`` matrices, rotations kept as given.

    Without ``times`` the frames are numbered 0, 1, 2 … (KITTI files)."""
    from scipy.spatial.transform import Rotation

    matrices = np.asarray(matrices, dtype=np.float64)
    if matrices.ndim != 3 or matrices.shape[1:] not in ((3, 4), (4, 4)):
        raise ConversionError(f"pose matrices have shape {matrices.shape}, need (n, 3, 4) or (n, 4, 4)")
    rotation = np.ascontiguousarray(matrices[:, :3, :3])
    stamps = np.arange(len(matrices), dtype=np.float64) if times is None else np.asarray(times, float)
    if not np.all(np.isfinite(rotation)):
        raise ConversionError(f"{name or 'input'}: {int(np.sum(~np.isfinite(rotation).all(axis=(1, 2))))} "
                              "pose matrices hold NaN or infinite values; remove those rows")
    quaternions = Rotation.from_matrix(rotation).as_quat(canonical=False)
    return Poses(stamps, np.ascontiguousarray(matrices[:, :3, 3]), quaternions, name, rotation)


def check(poses: Poses, label: str) -> None:
    """Refuse what no metric can use: mismatched shapes, fewer than 2 poses, NaN, zero quaternions."""
    n = len(poses)
    if poses.positions.shape != (n, 3) or poses.quaternions.shape != (n, 4):
        raise ConversionError(f"{label}: times, positions and quaternions disagree in length")
    if n < 2:
        raise ConversionError(f"{label} has {n} pose{'s' if n != 1 else ''}; evaluation needs at least 2")
    bad = ~(np.isfinite(poses.times) & np.isfinite(poses.positions).all(axis=1)
            & np.isfinite(poses.quaternions).all(axis=1))
    if bad.any():
        first = int(np.argmax(bad))
        raise ConversionError(f"{label}: {int(bad.sum())} of {n} poses hold NaN or infinite values "
                              f"(first at frame {first}); drop or repair them before evaluating")
    zero = np.einsum("ij,ij->i", poses.quaternions, poses.quaternions) < 4 * np.finfo(float).eps
    if zero.any():
        raise ConversionError(f"{label}: {int(zero.sum())} poses have a zero quaternion "
                              f"(first at frame {int(np.argmax(zero))}); they carry no rotation")


def read_poses(path: str | os.PathLike[str], format: str | None = None, **options: object) -> Poses:
    """Read a trajectory file (or bag topic: ``topic=…``) as Poses named after it.

    KITTI pose files keep their rotation matrices exactly as written (the reader leaves
    them in the root track's ``matrices``; evo uses them so, while the neutral model stores
    the nearest rotation), so their metrics match evo's to the last digits."""
    from .. import api

    motion = api.read(path, format=format, **options)
    if not isinstance(motion, Motion):
        raise ConversionError(f"{path} holds a {type(motion).__name__}, not a trajectory")
    label = os.fspath(path) if "topic" not in options else f"{os.fspath(path)}:{options['topic']}"
    poses = as_poses(motion, label)
    root = motion.tracks.get("root")
    exact = None if root is None else root.attrs.get("matrices")
    # only matrices that still go with the poses (nothing resampled or moved them)
    if isinstance(exact, np.ndarray) and exact.shape == (len(poses), 3, 4) \
            and np.array_equal(exact[:, :, 3], poses.positions):
        matrices = from_matrices(exact, poses.times, label).matrices
        poses = Poses(poses.times, poses.positions, poses.quaternions, label, matrices)
    return poses
