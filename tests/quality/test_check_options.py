"""Bad ``-T``/``--feet`` values: each is one ConversionError naming the key (one line,
exit 2 on the command line), never a crash, a silent truncation or a check that cannot
fail."""

from __future__ import annotations

import pytest

from conftest import corpus_file
from motionkit.errors import ConversionError
from motionkit.quality import DEFAULT, PROTOMOTIONS
from test_cli import run_cli

G1 = ["check", str(corpus_file("mimickit", "g1_walk.pkl")), "--model",
      str(corpus_file("containers", "characters", "g1.xml"))]


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("penetration_stride", 0, ">= 1"), ("penetration_stride", -1, ">= 1"),
    ("penetration_stride", 1.5, "whole number"), ("penetration_soft_frames", 2.7, "whole number"),
    ("penetration_soft_frames", -1, ">= 0"), ("float_time", float("inf"), "finite"),
    ("float_time", "inf", "finite"), ("body_speed", float("nan"), "finite"),
    ("body_speed", "abc", "a number"), ("body_speed", -3.0, ">= 0"),
    ("contact_height", -0.1, ">= 0"), ("body_speed", True, "a number"),
    ("skip_rest_overlaps", "no", "true or false"), ("skip_rest_overlaps", "off", "true or false"),
    ("skip_rest_overlaps", "0", "true or false"), ("skip_rest_overlaps", 0.5, "true or false"),
    ("skip_rest_overlaps", 1, "true or false"),
])
def test_a_bad_threshold_is_refused_naming_its_key(key: str, value: object,
                                                    expected: str) -> None:
    for preset in (DEFAULT, PROTOMOTIONS):
        with pytest.raises(ConversionError) as info:
            preset.with_options(**{key: value})
        assert key in str(info.value) and expected in str(info.value)


def test_good_thresholds_keep_their_types() -> None:
    chosen = DEFAULT.with_options(below_ground=-0.1, penetration_stride=3.0,
                                  skip_rest_overlaps="False", body_speed="10", float_time=2)
    assert chosen.below_ground == -0.1 and chosen.body_speed == 10.0
    assert chosen.penetration_stride == 3 and isinstance(chosen.penetration_stride, int)
    assert chosen.skip_rest_overlaps is False and isinstance(chosen.float_time, float)
    assert DEFAULT.with_options(body_speed=None) == DEFAULT


@pytest.mark.parametrize("args", [
    ["--feet", "nosuch"], ["-T", "penetration_stride=0"], ["-T", "float_time=inf"],
    ["-T", "body_speed=abc"], ["-T", "penetration_stride=-1"], ["-T", "body_speed=NaN"],
    ["-T", "penetration_stride=1.5"], ["-T", "skip_rest_overlaps=no"],
])
def test_the_command_prints_one_line_and_exits_2(args: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([*G1, *args], capsys)
    lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
    assert code == 2 and len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    name = args[1].partition("=")[0]
    assert name in lines[0]
    if args[0] == "--feet":
        assert "left_ankle_roll_link" in lines[0] or "bodies:" in lines[0]
