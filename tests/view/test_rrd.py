"""``view --rrd``: a rerun recording of the scene, read back with rerun's own reader
(``rerun.chunk.RrdReader``; rerun 0.41 removed ``rr.dataframe.load_recording``): every link's
transform on the ``time`` timeline equals motionkit's FK to 1e-6, quaternions in rerun's x y z w.
Skips without rerun-sdk (the ``rerun`` extra; in the test lock, so CI has it)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.cli import main
from motionkit.spatial import quaternion
from motionkit.view.shapes import groups


def _read_back(path: Path) -> tuple[dict[str, dict[str, np.ndarray]], set[str]]:
    """Per entity: time (s), translation, quaternion (x y z w); and the static entities."""
    from rerun.chunk import RrdReader

    parts: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    static = set()
    for chunk in RrdReader(path).stream():
        if chunk.is_static:
            static.add(chunk.entity_path)
            continue
        batch = chunk.to_record_batch()
        names = batch.schema.names
        if "Transform3D:translation" not in names:
            continue
        time = batch.column(names.index("time")).cast("int64").to_numpy() / 1e9
        parts[chunk.entity_path]["time"].append(time)
        for column, key in (("Transform3D:translation", "t"), ("Transform3D:quaternion", "q")):
            values = batch.column(names.index(column)).to_pylist()
            parts[chunk.entity_path][key].append(np.array([np.asarray(v).reshape(-1) for v in values]))
    out = {}
    for name, found in parts.items():
        order = np.argsort(np.concatenate(found["time"]), kind="stable")
        out[name] = {key: np.concatenate(found[key])[order] for key in ("time", "t", "q")}
    return out, static


def _sticks(path: Path, name: str) -> np.ndarray:
    """The stick segments ``(frames, sticks, 2, 3)`` logged at ``name``, in time order."""
    from rerun.chunk import RrdReader

    rows: list[tuple[int, list[object]]] = []
    for chunk in RrdReader(path).stream():
        if chunk.entity_path == name and not chunk.is_static:
            batch = chunk.to_record_batch()
            names = batch.schema.names
            times = batch.column(names.index("time")).cast("int64").to_pylist()
            rows += zip(times, batch.column(names.index("LineStrips3D:strips")).to_pylist(), strict=True)
    rows.sort(key=lambda row: row[0])
    return np.array([[np.asarray(strip, dtype=float).reshape(2, 3) for strip in strips]
                     for _, strips in rows])


@pytest.mark.corpus
def test_the_recording_reads_back_as_our_fk(tmp_path: Path) -> None:
    require_peer("rerun")
    model, walk = corpus_file("choreonoid", "SR1.body"), corpus_file("choreonoid", "SR1WalkPattern1.seq")
    target = tmp_path / "walk.rrd"
    try:
        main(["view", str(walk), "--model", str(model), "--rrd", str(target)])
    except SystemExit as exc:
        assert not exc.code
    skeleton = mk.read(model)
    assert isinstance(skeleton, mk.Skeleton)
    links = mk.kinematics.link_motion(skeleton, mk.read(walk)).tracks["links"]
    found, static = _read_back(target)
    for b, body in enumerate(skeleton.bodies):
        got = found[f"/motionkit/SR1WalkPattern1.seq/{body.name}"]
        assert len(got["time"]) == links.frames  # every frame, none subsampled
        # rerun keeps durations as whole nanoseconds
        np.testing.assert_allclose(got["time"], links.times - links.times[0], rtol=0, atol=1.01e-9)
        np.testing.assert_allclose(got["t"], links.data[:, b, :3], rtol=0, atol=1e-6)
        turn = quaternion.multiply(quaternion.conjugate(got["q"]), links.data[:, b, 3:])
        assert np.abs(turn[:, :3]).max() < 1e-6  # the same rotation: x y z w as motionkit's
    shapes = sum(len(group.bodies) for group in groups(skeleton))  # the viewer's drawn shapes
    assert sum("/shape" in name for name in static) == shapes
    assert "/motionkit/SR1WalkPattern1.seq/path" in static
    sticks = _sticks(target, "/motionkit/SR1WalkPattern1.seq/sticks")
    parents = [b.parent for b in skeleton.bodies]
    child = [i for i, p in enumerate(parents) if p >= 0]
    assert sticks.shape == (links.frames, len(child), 2, 3)
    np.testing.assert_allclose(sticks[:, :, 1], links.data[:, child, :3], rtol=0, atol=1e-6)
    np.testing.assert_allclose(sticks[:, :, 0], links.data[:, [parents[i] for i in child], :3],
                               rtol=0, atol=1e-6)


def test_a_missing_rerun_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "rerun", None)  # as if not installed
    traj = tmp_path / "a.tum"
    traj.write_text("0 0 0 0 0 0 0 1\n1 1 0 0 0 0 0 1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(traj), "--rrd", str(tmp_path / "a.rrd")])
    assert exit_info.value.code == 2
    assert "motionkit[rerun]" in capsys.readouterr().err and not (tmp_path / "a.rrd").exists()


@pytest.mark.corpus
def test_ape_errors_are_on_the_same_timeline(tmp_path: Path) -> None:
    require_peer("rerun")
    from rerun.chunk import RrdReader

    ref = corpus_file("evo", "freiburg1_xyz-groundtruth.txt")
    est = corpus_file("evo", "freiburg1_xyz-rgbdslam.txt")
    target = tmp_path / "ape.rrd"
    try:
        main(["view", str(ref), str(est), "--rrd", str(target), "--ape"])
    except SystemExit as exc:
        assert not exc.code
    expected = mk.evaluation.ape(mk.evaluation.read_poses(ref), mk.evaluation.read_poses(est))
    firsts = [mk.evaluation.read_poses(path).times[0] for path in (ref, est)]
    start = min(firsts)  # one clock: the poses drawn and the errors, from the earliest stamp
    drawn = {round(float(found["time"][0] + start), 3) for found in _read_back(target)[0].values()}
    assert drawn == {round(float(first), 3) for first in firsts}
    times, values = [], []
    for chunk in RrdReader(target).stream():
        if chunk.entity_path.startswith("/motionkit/errors/") and not chunk.is_static:
            batch = chunk.to_record_batch()
            names = batch.schema.names
            times += batch.column(names.index("time")).cast("int64").to_pylist()
            values += [v[0] for v in batch.column(names.index("Scalars:scalars")).to_pylist()]
    order = np.argsort(times, kind="stable")
    np.testing.assert_allclose(np.asarray(values)[order], expected.errors, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(times)[order] / 1e9, expected.t_ref - start, rtol=0, atol=1.01e-9)
