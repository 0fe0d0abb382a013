"""docs/adding-a-format.md, run as written: its toy module and registry entry give a
format that reads, writes, converts and obeys the contract with nothing else added."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit.cli import main
from motionkit.formats import registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-format.md"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[registry.Format]:
    module_text, entry_text = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    module = types.ModuleType("motionkit.formats.toy")
    exec(compile(module_text, str(DOC), "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "motionkit.formats.toy", module)
    entry = eval(entry_text.strip().rstrip(","), {"Format": registry.Format})
    monkeypatch.setattr(registry, "FORMATS", (*registry.FORMATS, entry))
    monkeypatch.setitem(registry._BY_NAME, entry.name, entry)
    yield entry


def _trajectory(tmp_path: Path) -> Path:
    path = tmp_path / "a.toy"
    path.write_text("toy 10.0\n0.0 0.5 1.0\n1.0 1.5 2.0\n")
    return path


def test_the_toy_format_reads_and_writes(tmp_path: Path, toy: registry.Format) -> None:
    motion = mk.read(_trajectory(tmp_path), scale=2)
    assert isinstance(motion, mk.Motion)
    np.testing.assert_array_equal(motion.tracks["root"].data[:, :3], [[0, 1, 2], [2, 3, 4]])
    mk.write(tmp_path / "b.toy", motion)
    assert (tmp_path / "b.toy").read_text() == "toy 10.0\n0.0 1.0 2.0\n2.0 3.0 4.0\n"
    assert toy.read_options() == {"scale"} and toy.write_options() == {"lossy", "link"}


def test_the_toy_format_gets_the_contract_for_free(tmp_path: Path, toy: registry.Format) -> None:
    path = _trajectory(tmp_path)
    with pytest.raises(mk.MotionkitError, match=r"scal .*known: scale"):
        mk.read(path, scal=2)
    motion = mk.read(path)
    assert isinstance(motion, mk.Motion)
    motion.add(mk.Track("velocity", "vector3", np.zeros((2, 3)), motion.tracks["root"].timeline))
    motion.meta["epsg"] = 25832
    with pytest.raises(mk.ConversionError, match=r"'velocity'.*EPSG 25832"):
        mk.write(tmp_path / "c.toy", motion)
    with pytest.warns(mk.MotionkitWarning, match=r"dropped track 'velocity'"):
        mk.write(tmp_path / "c.toy", motion, lossy=True)
    stamped = mk.Motion()
    stamped.add(mk.Track("root", "pose", motion.tracks["root"].data, mk.Timeline.stamped([0, 0.3])))
    with pytest.raises(mk.ConversionError, match="time stamps"):
        mk.write(tmp_path / "d.toy", stamped)
    (tmp_path / "bad.toy").write_text("toy 10\n1 2 x\n")
    with pytest.raises(mk.FormatError, match=r"bad\.toy: not a number"):
        mk.read(tmp_path / "bad.toy")
    (tmp_path / "odd.toy").write_text("toy 10\n1 2\n")  # a ValueError the module did not mean
    with pytest.raises(mk.FormatError, match=r"odd\.toy: cannot be read \(ValueError"):
        mk.read(tmp_path / "odd.toy")


def test_the_toy_format_converts_and_shows(tmp_path: Path, toy: registry.Format,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _trajectory(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["convert", str(path), str(tmp_path / "a.traj")])
    assert stop.value.code == 0
    again = mk.read(tmp_path / "a.traj")
    assert isinstance(again, mk.Motion)
    np.testing.assert_array_equal(again.tracks["root"].data[:, :3], [[0, 0.5, 1], [1, 1.5, 2]])
    with pytest.raises(SystemExit):
        main(["info", str(path)])
    assert "(toy)" in capsys.readouterr().out
