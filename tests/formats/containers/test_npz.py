"""The .npz reader shared by the AMASS, AMP and BeyondMimic containers: broken archives
are one FormatError, and the byte budget counts the float64 copies the readers make."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit.errors import FormatError


def _amass(path: Path, poses: np.ndarray) -> Path:
    np.savez_compressed(path, trans=np.zeros((len(poses), 3)), poses=poses,
                        mocap_framerate=np.array(30.0))
    return path


def test_a_member_name_that_is_not_utf8_is_one_format_error(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, trans=np.zeros((3, 3)), poses=np.zeros((3, 156)),
             mocap_framerate=np.array(30.0))
    data = bytearray(buffer.getvalue())
    at = data.find(b"PK\x01\x02")  # the first central directory entry: says UTF-8, is not
    struct.pack_into("<H", data, at + 8, struct.unpack_from("<H", data, at + 8)[0] | 0x800)
    data[at + 46] = 0xFF
    path = tmp_path / "badname.npz"
    path.write_bytes(bytes(data))
    for fmt in (None, "amass", "isaaclab-amp", "beyondmimic"):
        with pytest.raises(FormatError) as caught:
            mk.read(path, format=fmt)
        assert caught.value.path == str(path)


def test_narrow_integers_are_charged_as_the_float64_they_become(tmp_path: Path) -> None:
    # 70,000 x 156 uint8 is 10.9 MB stored (under the 64 MiB floor) and 87 MB as float64
    path = _amass(tmp_path / "u8.npz", np.zeros((70_000, 156), np.uint8))
    with pytest.raises(FormatError, match="array byte budget"):
        mk.read(path, format="amass")
    small = _amass(tmp_path / "small.npz", np.zeros((1_000, 156), np.uint8))
    assert mk.read(small, format="amass").frames == 1_000
