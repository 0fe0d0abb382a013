"""Packed motion libraries: same frames as the sources, changes noticed, damage refused."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import motionkit as mk
from motionkit.cli import cli
from motionkit.dataset.pack import check_pack, open_pack, pack
from motionkit.errors import FormatError
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib
from motionkit.motionlib.packfile import HEADER, MAGIC


def _clip(rng: np.random.Generator, frames: int) -> Motion:
    timeline = Timeline.uniform(30.0, frames)
    rot = rng.normal(size=(frames, 15, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    root = np.concatenate([np.cumsum(rng.normal(size=(frames, 3)) * 0.01, axis=0), rot[:, 0]], 1)
    motion = Motion(meta={"loop_mode": "WRAP" if rng.random() < 0.5 else "CLAMP"})
    motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joint_rotations", "quaternion", rot[:, 1:], timeline))
    motion.add(Track("contacts", "value", rng.random((frames, 15)), timeline))
    return motion


@pytest.fixture
def listing(tmp_path: Path) -> Path:
    """A motion list of 12 PARC files (one listed twice) with weights."""
    rng = np.random.default_rng(5)
    (tmp_path / "motions").mkdir()
    lines = ["motions:"]
    for index in range(12):
        mk.write(tmp_path / "motions" / f"clip{index}.pkl", _clip(rng, int(rng.integers(2, 60))))
        lines.append(f"  - file: motions/clip{index}.pkl\n    weight: {index + 1}")
    lines.append("  - file: motions/clip3.pkl\n    weight: 0.5")
    path = tmp_path / "list.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_pack_gives_the_same_frames_as_its_sources(listing: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["pack", str(listing), "-o", str(tmp_path / "lib.mkpack")])
    assert result.exit_code == 0, result.output
    source = MotionLib.load(listing)
    packed = MotionLib.load(tmp_path / "lib.mkpack")
    assert packed.names == source.names and np.array_equal(packed.weights, source.weights)
    assert np.array_equal(packed.frame_counts, source.frame_counts)
    rng = np.random.default_rng(0)
    ids = source.sample_motions(4000, rng)
    times = source.sample_time(ids, rng=rng) * 1.5 - 0.1  # before, inside and past the ends
    expected, found = source.frames_at(ids, times).as_dict(), packed.frames_at(ids, times).as_dict()
    assert expected.keys() == found.keys()
    for name in expected:
        assert np.array_equal(expected[name], found[name]), name
    one = source.frames_for(3, fk=False).as_dict()
    for name, value in packed.frames_for(3, fk=False).as_dict().items():
        assert np.array_equal(one[name], value)
    assert np.array_equal(packed.sample_motions(100, 1), source.sample_motions(100, 1))


def test_check_says_when_sources_changed(listing: Path, tmp_path: Path) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    assert check_pack(target) == []
    runner = CliRunner()
    assert runner.invoke(cli, ["pack", "--check", str(target)]).exit_code == 0
    changed = tmp_path / "motions" / "clip4.pkl"
    changed.write_bytes(changed.read_bytes() + b"\0")
    (tmp_path / "motions" / "clip7.pkl").unlink()
    problems = check_pack(target)
    assert problems == [f"changed: {changed}", f"missing: {tmp_path / 'motions' / 'clip7.pkl'}"]
    result = runner.invoke(cli, ["pack", "--check", str(target)])
    assert result.exit_code == 2 and "changed:" in result.output


def _rewrite_index(path: Path, edit: dict[str, object] | None = None, **array: object) -> None:
    """Change the index and give it a matching hash, as a hostile writer would."""
    data = bytearray(path.read_bytes())
    _, length, _ = HEADER.unpack_from(data)
    index = json.loads(bytes(data[HEADER.size:HEADER.size + length]))
    index.update(edit or {})
    for entry in index["arrays"].values():
        entry.pop("sha256", None)  # room for the edits (opening does not read them)
    for name, entry in array.items():
        index["arrays"][name].update(entry)
    text = json.dumps(index, separators=(",", ":")).encode()
    assert len(text) <= length
    text = text.ljust(length)
    data[:HEADER.size + length] = HEADER.pack(MAGIC, length, hashlib.sha256(text).digest()) + text
    path.write_bytes(bytes(data))


def test_damaged_packs_are_one_clear_error(listing: Path, tmp_path: Path) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    whole = target.read_bytes()
    bad = tmp_path / "bad.mkpack"
    for size in (0, 7, HEADER.size, HEADER.size + 100, len(whole) // 2, len(whole) - 1):
        bad.write_bytes(whole[:size])
        with pytest.raises(FormatError, match=r"truncated|too short|damaged"):
            MotionLib.load(bad)
    tampered = bytearray(whole)
    tampered[HEADER.size + 20] ^= 0x01  # inside the index
    bad.write_bytes(bytes(tampered))
    with pytest.raises(FormatError, match="index does not match its hash"):
        MotionLib.load(bad)
    tampered = bytearray(whole)
    tampered[-9] ^= 0xFF  # inside the last array
    bad.write_bytes(bytes(tampered))
    MotionLib.load(bad)  # opening maps the arrays without reading them...
    with pytest.raises(FormatError, match="does not match its hash"):
        open_pack(bad, verify=True)  # ...verifying reads them
    assert any("does not match its hash" in p for p in check_pack(bad))
    bad.write_bytes(b"PK\x03\x04" + whole[4:])
    with pytest.raises(FormatError, match="not a motion pack"):
        MotionLib.load(bad)
    bad.write_bytes(whole[:8] + struct.pack("<Q", 1 << 62) + whole[16:])
    with pytest.raises(FormatError, match="truncated or damaged"):
        MotionLib.load(bad)


@pytest.mark.parametrize("edit", [
    {"root_pos": {"shape": [10 ** 12, 3]}},
    {"root_pos": {"offset": 2 ** 62}},
    {"joint_rot": {"shape": [1, 2]}},
    {"contacts": {"dtype": "|O"}},
    {"frame_counts": {"offset": 3}},
    {"weights": {"shape": [-1]}},
    {"weights": {"offset": 0}},
    {"frame_counts": {"dtype": "<f8"}},
])
def test_a_hostile_index_is_checked_against_the_file(listing: Path, tmp_path: Path,
                                                     edit: dict[str, dict[str, object]]) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    _rewrite_index(target, **edit)
    with pytest.raises(FormatError) as caught:
        MotionLib.load(target)
    assert "\n" not in str(caught.value)


def test_hostile_values_in_the_small_arrays(listing: Path, tmp_path: Path) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    whole = target.read_bytes()
    _, length, _ = HEADER.unpack_from(whole)
    entries = json.loads(whole[HEADER.size:HEADER.size + length])["arrays"]
    for name, value in (("frame_counts", np.int64(2 ** 62)), ("frame_counts", np.int64(0)),
                        ("fps", np.float64(np.nan)), ("weights", np.float64(-1.0)),
                        ("weights", np.float64(7.0)), ("wrap", np.uint8(7))):
        data = bytearray(whole)
        offset = entries[name]["offset"]
        data[offset:offset + value.nbytes] = value.tobytes()
        target.write_bytes(bytes(data))
        with pytest.raises(FormatError, match="is damaged"):
            MotionLib.load(target)


def test_a_hostile_index_of_wrong_values(listing: Path, tmp_path: Path) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    whole = target.read_bytes()
    for edit in ({"names": ["a"]}, {"version": 2}, {"arrays": {}}, {"format": "other"}, {"names": "x"}):
        target.write_bytes(whole)
        _rewrite_index(target, edit)
        with pytest.raises(FormatError):
            MotionLib.load(target)


def _sources(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    _, length, _ = HEADER.unpack_from(data)
    sources: list[dict[str, object]] = json.loads(data[HEADER.size:HEADER.size + length])["sources"]
    return sources


def test_check_opens_no_file_outside_the_pack_folder(listing: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A crafted pack must not make --check hash a file of its choosing (a content oracle)."""
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("secret")
    digest = hashlib.sha256(b"secret").hexdigest()
    (tmp_path / "escape").symlink_to(outside)
    records = [{"path": str(outside), "size": 6, "sha256": digest},  # absolute
               {"path": f"../{outside.name}", "size": 6, "sha256": digest},  # leaves the folder
               {"path": "escape", "size": 6, "sha256": digest}]  # a link that leaves it
    _rewrite_index(target, {"sources": records})
    opened: list[str] = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda file, *a, **k: (opened.append(str(file)),
                                                                real_open(file, *a, **k))[1])
    problems = [p for p in check_pack(target) if not p.startswith("array ")]  # hashes dropped
    assert len(problems) == 3 and all(p.startswith("not checked (outside") for p in problems)
    assert not any("secret" in name for name in opened)


def test_check_reads_no_more_than_the_recorded_size(listing: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "lib.mkpack"
    pack(listing, target)
    big = tmp_path / "motions" / "clip0.pkl"
    with open(big, "ab") as handle:
        handle.truncate(1 << 40)  # a sparse terabyte: reading it would take hours
    hashed: list[Path] = []
    from motionkit.motionlib import packfile
    real = packfile.sha256
    monkeypatch.setattr(packfile, "sha256", lambda path: (hashed.append(path), real(path))[1])
    assert check_pack(target) == [f"changed: {big}"]
    assert not any(path.name == "clip0.pkl" for path in hashed)


def test_packing_sources_outside_its_folder_warns(listing: Path, tmp_path: Path) -> None:
    (tmp_path / "packs").mkdir()
    with pytest.warns(mk.MotionkitWarning, match=r"12 source file\(s\) lie outside"):
        pack(listing, tmp_path / "packs" / "lib.mkpack")
    assert len(_sources(tmp_path / "packs" / "lib.mkpack")) == 12
