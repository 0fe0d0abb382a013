"""``motionkit formats``: what each format reads and writes, with its -R and -O keys."""

from __future__ import annotations

import json

import pytest

from motionkit.formats import registry
from test_cli import run_cli


def test_every_format_is_listed_with_its_extensions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["formats"], capsys)
    assert code == 0, err
    for info in registry.formats():
        assert f"{info.name}: {info.description}" in out
        assert f"  extensions: {', '.join(info.extensions)}" in out


def test_one_format_s_options_are_its_reader_s_and_writer_s(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["formats", "--json", "tum"], capsys)
    doc = json.loads(out)
    tum = registry.by_name("tum")
    assert doc["read_options"] == sorted(tum.read_options())
    assert doc["write_options"] == sorted(tum.write_options())
    assert doc["holds"]["tracks"] == {"root": ["pose"]}
    code, out, _ = run_cli(["formats", "tum"], capsys)
    assert "read options (-R KEY=VALUE): " + ", ".join(sorted(tum.read_options())) in out
    assert "write options (-O KEY=VALUE): " + ", ".join(sorted(tum.write_options())) in out
    code, _, err = run_cli(["formats", "tumm"], capsys)
    assert code == 2 and "did you mean 'tum'" in err


def test_convert_help_points_to_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["convert", "--help"], capsys)
    assert code == 0 and "motionkit formats" in out
