"""The command line: one line per problem, exit status 2, help with examples, the info contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import motionkit as mk
from conftest import corpus_file
from motionkit.cli import COMMANDS, cli, main
from seqfiles import V2_TIMED, V4_ALL, v2_values


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``motionkit ARGS`` in process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def test_cli_validate_reports_one_line_per_problem_and_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.seq"
    good.write_text(V4_ALL)
    bad = tmp_path / "bad.seq"
    bad.write_text(v2_values("      - [ 1, 2 ]\n      - [ 1, abc ]\n"))
    code, out, err = run_cli(["validate", str(good), str(bad)], capsys)
    assert code == 2
    assert f"{good}: ok" in out
    assert f'{bad}:12:14: a frame value must be a number, not "abc"' in out
    assert "Traceback" not in out + err


def test_cli_validate_all_good_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.seq"
    good.write_text(V4_ALL)
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", str(good)])
    assert exit_info.value.code in (0, None)


@pytest.mark.parametrize(
    "args",
    [
        ["info", "{missing}"],
        ["convert", "{bad}", "{out}"],
        ["convert", "{good}", "{out}", "-O", "version=7"],
        ["convert", "{good}", "{out}", "-O", "colour=red"],
        ["resample", "{good}", "{out}", "--rate", "-5"],
        ["info", "--from", "nosuchformat", "{good}"],
    ],
)
def test_cli_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str]) -> None:
    good = tmp_path / "good.seq"
    good.write_text(V4_ALL)
    bad = tmp_path / "bad.seq"
    bad.write_text("type: CompositeSeq\ncomponents: [\n")
    names = {"missing": tmp_path / "none.seq", "bad": bad, "good": good, "out": tmp_path / "o.seq"}
    code, _, err = run_cli([a.format(**names) for a in args], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("motionkit: ") and "Traceback" not in err
    assert not (tmp_path / "o.seq").exists()


def test_cli_help_has_examples() -> None:
    for command in ([], *([name] for name in COMMANDS)):
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0 and "Examples:" in result.output


def test_cli_info_json_follows_the_contract(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["info", "--json", str(corpus_file("choreonoid",
                                                                      "SR1WalkPattern3.seq"))])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["format"] == "seq" and doc["frames"] == 4451
    assert doc["duration"] == pytest.approx(8.9)
    assert doc["tracks"]["joints"]["kind"] == "value"
    assert doc["tracks"]["joints"]["shape"] == [4451, 29]
    assert doc["tracks"]["joints"]["rate"] == 500


def test_cli_resample_a_stamped_seq(tmp_path: Path) -> None:
    source = tmp_path / "timed.seq"
    source.write_text(V2_TIMED)
    target = tmp_path / "uniform.seq"
    with pytest.raises(SystemExit) as exit_info:
        main(["resample", str(source), str(target), "--rate", "60"])
    assert exit_info.value.code == 0
    joints = mk.read(target).tracks["joints"]
    assert joints.timeline.is_uniform and joints.timeline.rate == 60 and joints.frames == 11
    assert joints.data[2, 0] == pytest.approx(1 + (2 / 60 - 0.0333333333) / (0.0333333334))



def test_cli_debug_shows_the_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "none.seq"
    with pytest.raises(mk.FormatError, match="no such file"):
        main(["--debug", "info", str(missing)])


def test_cli_info_on_a_multi_topic_bag_gives_each_topic_its_frames(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["info", str(corpus_file("evo", "ROS_example.bag"))], capsys)
    assert code == 0
    assert "frames: 5439 to 12765 (per track below)" in out
    assert "track S-PTAM: pose 5439x7" in out and "track groundtruth: pose 12765x7" in out
