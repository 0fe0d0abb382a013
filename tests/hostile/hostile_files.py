"""Generators of hostile files, one per class of attack (made by the tests, never shipped).

Each :class:`Case` says how to make the file, how to read it (a format module's ``read``,
the safe unpickler, or the CLI), what must happen (a motionkit error, or a correct read)
and in how many CPU seconds. ``tests/hostile/hostile_child.py`` runs a case in a child
process under a memory limit and reports CPU time and peak memory.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

V2_HEAD = ("type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n"
           "  -\n    type: MultiValueSeq\n    content: JointPosition\n    numParts: 2\n"
           "    frames:\n      - [ 1, 2 ]\n      - [ 3, 4 ]\n")
V4_HEAD = ("type: CompositeSeq\nformat_version: 4\nframe_rate: 10\ncomponents:\n"
           "  -\n    type: MultiValueSeq\n    content: JointDisplacement\n    num_parts: 2\n"
           "    frames:\n      - [ 1, 2 ]\n      - [ 3, 4 ]\n")


@dataclass(frozen=True)
class Case:
    """One hostile file and what reading it must give."""

    name: str
    filename: str
    make: Callable[[], bytes]
    call: dict[str, Any]  # {"module": ..., "options": {...}} or {"pickle": True} or {"cli": [...]}
    #: "error": a MotionkitError; "ok": read without one; "either": the outcome is the YAML
    #: library's to decide (a release may refuse what an older one expanded), the bounds are ours
    expect: str = "error"
    seconds: float = 10.0  # CPU seconds
    extra: dict[str, Any] = field(default_factory=dict)
    #: writes the files the case's file names (meshes, links, FIFOs) into its folder and
    #: returns their bytes, which count towards the memory goal
    beside: Callable[[Path], int] | None = None


def _text(value: str) -> Callable[[], bytes]:
    return lambda: value.encode()


# ---------------------------------------------------------------- YAML: .seq, motion lists


def deep_flow_seq(levels: int = 30_000) -> bytes:
    return (V4_HEAD + "extra: " + "[" * levels + "]" * levels + "\n").encode()


def deep_block_seq(levels: int = 30_000) -> bytes:
    return (V4_HEAD + "extra:\n" + "  " + "- " * levels + "x\n").encode()


def alias_laughs_seq(levels: int = 40) -> bytes:
    laughs = "    l0: &l0 [ x, x ]\n" + "".join(
        f"    l{i}: &l{i} [ *l{i - 1}, *l{i - 1} ]\n" for i in range(1, levels))
    return (V4_HEAD + "  -\n    type: Strange\n" + laughs).encode()


def alias_chain_seq(levels: int = 5_000) -> bytes:
    """Kept data nested through aliases: shallow text, deep data (RecursionError before)."""
    chain = "    a0: &a0 [ x ]\n" + "".join(f"    a{i}: &a{i} [ *a{i - 1} ]\n"
                                            for i in range(1, levels))
    return (V4_HEAD + "  -\n    type: Strange\n" + chain).encode()


def deep_json_seq(levels: int = 100_000) -> bytes:
    """Deep JSON spelt with YAML escapes (``\\x5b`` is ``[``), invisible to a raw-text scan."""
    extension = '"{\\"attrs\\": {\\"x\\": ' + "\\x5b" * levels + "\\x5d" * levels + '}}"'
    return (V4_HEAD + f"    motionkit: {extension}\n").encode()


def long_json_int_seq(digits: int = 5_000) -> bytes:
    return (V4_HEAD + "    motionkit: '{\"start\": " + "1" * digits + "}'\n").encode()


def long_int_seq(digits: int = 5_000) -> bytes:
    return V2_HEAD.replace("numParts: 2", "numParts: " + "9" * digits).encode()


def far_stamp_seq() -> bytes:
    return (b"type: CompositeSeq\nformatVersion: 2\nframeRate: 1000\ncomponents:\n"
            b"  -\n    type: MultiValueSeq\n    content: JointPosition\n    numParts: 1\n"
            b"    hasFrameTime: true\n    frames:\n      - [ 0, 1 ]\n"
            b"      - [ 1000000, 2 ]\n")


def deep_motion_list(levels: int = 30_000) -> bytes:
    return ("motions:\n  - file: a.seq\nx: " + "[" * levels + "]" * levels + "\n").encode()


def merge_bomb_list(levels: int = 24) -> bytes:
    lines = ["motions: [{file: a.seq}]", "m0: &m0 {a: 1}", "n0: &n0 {b: 1}"]
    for i in range(1, levels + 1):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *n{i - 1}]}}")
        lines.append(f"n{i}: &n{i} {{<<: [*n{i - 1}, *m{i - 1}]}}")
    return ("\n".join(lines) + "\n").encode()


def wide_alias_list(width: int = 30) -> bytes:
    """Three levels of aliased mappings (width³ leaves): ``info`` once printed them all."""
    keys = ", ".join(f"k{i}: x" for i in range(width))
    lines = ["motions: [{file: a.seq}]", f"a: &a {{{keys}}}"]
    lines.append("b: &b {" + ", ".join(f"k{i}: *a" for i in range(width)) + "}")
    lines.append("c: &c {" + ", ".join(f"k{i}: *b" for i in range(width)) + "}")
    lines.append("d: {" + ", ".join(f"k{i}: *c" for i in range(width)) + "}")
    return ("\n".join(lines) + "\n").encode()


def python_tag_list(sentinel: str) -> bytes:
    return (f"motions:\n  - file: !!python/object/apply:os.system ['touch {sentinel}']\n"
            ).encode()


def python_tag_seq(sentinel: str) -> bytes:
    return (V4_HEAD + f"    extra: !!python/object/apply:os.system ['touch {sentinel}']\n"
            ).encode()


# ---------------------------------------------------------------- text tables


def wide_kitti(width: int = 400_000, rows: int = 50_000) -> bytes:
    return (" ".join(["1"] * width) + "\n" + "1 0 0 0 0 1 0 0 0 0 1 0\n" * rows).encode()


def wide_euroc(width: int = 400_000, rows: int = 50_000) -> bytes:
    head = "1403636579758555392," + ",".join(["1"] * width) + "\n"
    return (head + "1403636579758555393,1,2,3,1,0,0,0\n" * rows).encode()


def far_stamp_tum() -> bytes:
    return b"0 0 0 0 0 0 0 1\n100000000 0 0 0 0 0 0 1\n"


# ---------------------------------------------------------------- pickles


def _long(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def _int_list(values: list[int]) -> bytes:
    body = b"".join(struct.pack("<Bi", 0x4A, v) if -(2**31) <= v < 2**31 else _long(v)
                    for v in values)
    return b"](" + body + b"e"


def repeated_set_pickle(items: int = 10_000, calls: int = 10_000) -> bytes:
    """One memoized 10,000-item list passed to ``set`` 10,000 times (4 GB before)."""
    return (b"\x80\x02c__builtin__\nset\nq\x00" + _int_list(list(range(items))) + b"q\x01"
            + b"](" + b"h\x00h\x01\x85R" * calls + b"e.")


def colliding_set_pickle(items: int = 5_000, calls: int = 10) -> bytes:
    """Sets of integers that all hash alike (each insert probes every earlier item)."""
    modulus = 2**61 - 1  # hash(n * modulus) == 0 for every n
    return (b"\x80\x02c__builtin__\nset\nq\x00](" + b"".join(
        b"h\x00" + _int_list([(call * items + i) * modulus for i in range(items)]) + b"\x85R"
        for call in range(calls)) + b"e.")


def refetched_state_pickle(entries: int = 10_000, copies: int = 4_000) -> bytes:
    """A memoized dict filled after it was memoized, copied into new objects' states."""
    fill = b"".join(b"V%d\nN" % i for i in range(entries))
    return (b"\x80\x02cparc.util.terrain_util\nSubTerrain\nq\x00}q\x01(" + fill + b"u0]"
            + b"h\x00)\x81h\x01ba" * copies + b".")


def refetched_text_pickle(chars: int = 2_000_000, calls: int = 100) -> bytes:
    """A long protocol-0 text turned into bytes again and again."""
    return (b"\x80\x02c_codecs\nencode\nq\x00V" + b"a" * chars
            + b"\nq\x01X\x06\x00\x00\x00latin1q\x020]" + b"h\x00h\x01h\x02\x86Ra" * calls + b".")


def empty_sets_pickle(sets: int = 99_000, rounds: int = 20) -> bytes:
    """Empty sets (216 bytes each) from one opcode byte each."""
    return b"\x80\x02]" + (b"(" + b"\x8f" * sets + b"e") * rounds + b"."


def os_system_pickle(sentinel: str) -> bytes:
    return b"cos\nsystem\n(V" + f"touch {sentinel}".encode() + b"\ntR."


# ---------------------------------------------------------------- XML


def child_first_skel(bodies: int = 2_000) -> bytes:
    """A valid chain whose joints are listed child first (deep recursion before)."""
    parts = ['<skel><world name="w"><skeleton name="chain">']
    parts += [f'<body name="b{i}"/>' for i in range(bodies)]
    for i in reversed(range(bodies)):
        parent = "world" if i == 0 else f"b{i - 1}"
        parts.append(f'<joint type="revolute" name="j{i}"><parent>{parent}</parent>'
                     f"<child>b{i}</child><axis><xyz>0 0 1</xyz></axis></joint>")
    parts.append("</skeleton></world></skel>\n")
    return "".join(parts).encode()


def unknown_encoding_skel() -> bytes:
    return b'<?xml version="1.0" encoding="x-no-such-codec"?>\n<skel><world/></skel>\n'


def unknown_encoding_mjcf() -> bytes:
    """Bytes that are not UTF-8 in an encoding Python does not know (UTF-8 bytes would be
    read as UTF-8 whatever they declare, as MuJoCo reads them)."""
    return (b'<?xml version="1.0" encoding="x-bogus-enc"?>\n<mujoco model="caf\xe9">'
            b'<worldbody><body><freejoint/><geom size="1"/></body></worldbody></mujoco>\n')


def misplaced_declarations_mjcf(count: int = 100_000) -> bytes:
    """XML declarations after the start, which tolerate() blanks (each once counted the
    lines from the start of the file: quadratic, ~16 s for this 1 MB)."""
    return (b"<mujoco model='m'>" + b"\n<?xml a?>" * count +
            b"<worldbody><body><freejoint/><geom size='1'/></body></worldbody></mujoco>\n")


def default_class_amplifier(attributes: int = 5_000, uses: int = 2_000) -> bytes:
    """One default class of many joint attributes, used by many joints: every use copies
    them all (attributes x uses), from a file of attributes + uses lines."""
    own = " ".join(f'user{k}="1"' for k in range(attributes))
    joints = '<body><joint class="big"/><geom size="0.1"/></body>' * uses
    return (f'<mujoco><default><default class="big"><joint {own}/></default></default>'
            f'<worldbody><body><freejoint/><geom size="1"/>{joints}'
            "</body></worldbody></mujoco>").encode()


def many_joints_mjcf(joints: int = 10_001) -> bytes:
    """Hinges in one body: each becomes a neutral body (a joint chain), ~5 KB of model
    from ~50 bytes of text."""
    hinges = "".join(f'<joint name="j{k}" axis="0 0 1"/>' for k in range(joints))
    return (f'<mujoco><worldbody><body name="b"><freejoint/><geom size="0.1"/>{hinges}'
            "</body></worldbody></mujoco>").encode()


def many_geoms_mjcf(geoms: int = 20_000) -> bytes:
    """Boxes in one body: a shape each, and the body's inertia from all of them."""
    boxes = '<geom type="box" size="0.1 0.2 0.3" pos="0 0 1"/>' * geoms
    return (f'<mujoco><worldbody><body name="b"><freejoint/>{boxes}'
            "</body></worldbody></mujoco>").encode()


def mesh_mjcf(files: list[str], scales: list[str] | None = None) -> bytes:
    """A model of one body per mesh asset (each its own name, on the file given)."""
    assets = "".join(f'<mesh name="m{k}" file="{name}"'
                     + (f' scale="{scales[k]}"' if scales else "") + "/>"
                     for k, name in enumerate(files))
    bodies = "".join(f'<body name="b{k}" pos="0 0 {k}"><geom type="mesh" mesh="m{k}"/></body>'
                     for k in range(len(files)))
    return (f'<mujoco><asset>{assets}</asset><worldbody><body name="root"><freejoint/>'
            f'<geom size="0.1"/>{bodies}</body></worldbody></mujoco>').encode()


def _writes(name: str, data: bytes) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        (folder / name).write_bytes(data)
        return len(data)

    return write


def fan_obj(corners: int = 2_000_000) -> bytes:
    """One OBJ polygon of this many corners: a fan of a triangle per two bytes (a 4 MB
    file took 905 MB and 4 s)."""
    return b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf" + b" 1 2 3 4" * (corners // 4) + b"\n"


def big_stl(triangles: int = 200_000) -> bytes:
    """A binary STL of random triangles (MuJoCo's most, 0.2 s of mass each)."""
    import numpy as np

    records = np.zeros(triangles, dtype=[("normal", "<f4", 3), ("corners", "<f4", (3, 3)),
                                         ("extra", "<u2")])
    records["corners"] = np.random.default_rng(0).normal(size=(triangles, 3, 3))
    return b"\0" * 80 + struct.pack("<I", triangles) + records.tobytes()


def _link(name: str, target: str) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        (folder / name).symlink_to(target)
        return 0

    return write


def _fifo(name: str) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        os.mkfifo(folder / name)
        return 0

    return write


def bvh_frame_time(frame_time: str = "1e-300", row: str = "1 1 1") -> bytes:
    """A one-joint BVH of two frames with this frame time and second row."""
    return ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n"
            "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 2\n"
            f"Frame Time: {frame_time}\n0 0 0\n{row}\n").encode()


def entity_bomb_skel() -> bytes:
    lol = "".join(f'<!ENTITY l{i} "&l{i - 1};&l{i - 1};&l{i - 1};">' for i in range(1, 12))
    return (f'<?xml version="1.0"?><!DOCTYPE skel [<!ENTITY l0 "lol">{lol}]>'
            "<skel>&l11;</skel>\n").encode()


# ---------------------------------------------------------------- .body (read via the CLI)


def chain_body(links: int = 10_000) -> bytes:
    """A chain of this many links (10,000: the most a model may have)."""
    lines = ["format: ChoreonoidBody", "formatVersion: 1.0", "name: chain", "links:",
             "  - {name: L0, jointType: free}"]
    lines += [f"  - {{name: L{i}, parent: L{i - 1}, jointType: revolute, jointAxis: Z, "
              f"jointId: {i - 1}}}" for i in range(1, links)]
    return ("\n".join(lines) + "\n").encode()


def long_joint_id_body() -> bytes:
    return ("format: ChoreonoidBody\nformatVersion: 1.0\nname: b\nlinks:\n"
            "  - {name: L0, jointType: free}\n"
            f"  - {{name: L1, parent: L0, jointType: revolute, jointAxis: Z, jointId: {'7' * 5000}}}\n"
            ).encode()


def deep_flow_body(levels: int = 30_000) -> bytes:
    return ("format: ChoreonoidBody\nformatVersion: 1.0\nname: b\nx: " + "[" * levels
            + "]" * levels + "\n").encode()


# ---------------------------------------------------------------- terminal injection


def escape_labels_seq() -> bytes:
    """Labels and names holding terminal escapes and a forged line."""
    return (b"type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n"
            b"  -\n    type: MultiValueSeq\n    content: \"J\\e]0;pwned\\a\\e[2J\"\n"
            b"    numParts: 1\n    partLabels: [ \"a\\e[31mred\", \"b\" ]\n"
            b"    frames:\n      - [ 1 ]\n")


def forged_line_seq() -> bytes:
    """An error message that would print ``other.seq: ok`` on a line of its own."""
    return (b"type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n"
            b"  -\n    type: MultiValueSeq\n    content: \"\\e]0;t\\a\"\n"
            b"    numParts: \"1\\nother.seq: ok\\n\"\n    frames:\n      - [ 1 ]\n")


SEQ = {"module": "choreonoid.seq"}
LIST = {"module": "parc.motionlist", "options": {"variables": {}}}

CASES: tuple[Case, ...] = (
    Case("seq deep flow", "deep.seq", deep_flow_seq, SEQ),
    Case("seq deep flow, full path", "deep.seq", deep_flow_seq,
         {**SEQ, "options": {"fast": False}}),
    Case("seq deep block", "deep_block.seq", deep_block_seq, SEQ),
    Case("seq alias laughs", "laughs.seq", alias_laughs_seq, SEQ),
    Case("seq alias chain", "chain.seq", alias_chain_seq, SEQ),
    Case("seq deep JSON", "json.seq", deep_json_seq, SEQ),
    Case("seq 5,000-digit numParts", "digits.seq", long_int_seq, SEQ),
    Case("seq 5,000-digit JSON number", "json_digits.seq", long_json_int_seq, SEQ),
    Case("seq far stamp, Choreonoid import", "stamp.seq", far_stamp_seq,
         {**SEQ, "options": {"timed": "choreonoid"}}),
    Case("motion list deep flow", "deep.yaml", deep_motion_list, LIST),
    # PyYAML <= 6.0.3 doubles merged keys at each level (our work budget refuses it);
    # 6.0.4 no longer does, and the list then reads.
    Case("motion list merge bomb", "merge.yaml", merge_bomb_list, LIST, expect="either"),
    Case("motion list wide aliases", "wide.yaml", wide_alias_list, LIST, expect="ok"),
    Case("KITTI wide first row", "wide.txt", wide_kitti, {"module": "trajectory.kitti"}),
    Case("EuRoC wide first row", "wide.csv", wide_euroc, {"module": "trajectory.euroc"}),
    Case("pickle repeated set", "sets.pkl", repeated_set_pickle, {"pickle": True}),
    Case("pickle colliding set", "collide.pkl", colliding_set_pickle, {"pickle": True}),
    Case("pickle refetched state", "state.pkl", refetched_state_pickle, {"pickle": True}),
    Case("pickle refetched text", "text.pkl", refetched_text_pickle, {"pickle": True}),
    Case("pickle empty sets", "sets0.pkl", empty_sets_pickle, {"pickle": True}),
    Case("skel child-first chain", "chain.skel", child_first_skel, {"module": "dart.skel"},
         expect="ok"),
    Case("skel unknown encoding", "enc.skel", unknown_encoding_skel, {"module": "dart.skel"}),
    Case("skel entity bomb", "bomb.skel", entity_bomb_skel, {"module": "dart.skel"}),
    Case("bvh 1e-300 s frame time", "fast.bvh", bvh_frame_time, {"module": "bvh"}),
    Case("mjcf unknown encoding", "enc.xml", unknown_encoding_mjcf, {"module": "mujoco.mjcf"}),
    Case("mjcf 100,000 misplaced declarations", "decl.xml", misplaced_declarations_mjcf,
         {"module": "mujoco.mjcf"}, expect="ok", seconds=3.0),
    Case("mjcf OBJ fan of 2,000,000 corners", "fan.xml", lambda: mesh_mjcf(["fan.obj"]),
         {"module": "mujoco.mjcf"}, expect="ok", seconds=3.0,
         beside=_writes("fan.obj", fan_obj())),
    Case("mjcf 9,000 assets on one STL", "many.xml", lambda: mesh_mjcf(["big.stl"] * 9_000),
         {"module": "mujoco.mjcf"}, expect="ok", seconds=5.0,
         beside=_writes("big.stl", big_stl())),
    Case("mjcf mesh linked to /dev/zero", "zero.xml", lambda: mesh_mjcf(["zero.stl"]),
         {"module": "mujoco.mjcf"}, expect="ok", seconds=3.0,
         beside=_link("zero.stl", "/dev/zero")),
    Case("mjcf mesh that is a FIFO", "fifo.xml", lambda: mesh_mjcf(["pipe.obj"]),
         {"module": "mujoco.mjcf"}, expect="ok", seconds=3.0, beside=_fifo("pipe.obj")),
    Case("mjcf default class amplifier", "defaults.xml", default_class_amplifier,
         {"module": "mujoco.mjcf"}),
    Case("character default class amplifier", "defaults.xml", default_class_amplifier,
         {"module": "parc.character"}),
    Case("mjcf 10,001 joints", "joints.xml", many_joints_mjcf, {"module": "mujoco.mjcf"}),
    Case("character 10,001 joints", "joints.xml", many_joints_mjcf,
         {"module": "parc.character"}),
    Case("mjcf 20,000 geoms", "geoms.xml", many_geoms_mjcf, {"module": "mujoco.mjcf"},
         expect="ok"),
    Case("character 20,000 geoms", "geoms.xml", many_geoms_mjcf, {"module": "parc.character"},
         expect="ok"),
    Case("mjcf 100,001 geoms", "geoms.xml", lambda: many_geoms_mjcf(100_001),
         {"module": "mujoco.mjcf"}),
    Case("body 10,001 links", "chain.body", lambda: chain_body(10_001),
         {"module": "choreonoid.body"}),
    Case("character unknown encoding", "enc.xml", unknown_encoding_mjcf,
         {"module": "parc.character"}),
    Case("body deep flow", "deep.body", deep_flow_body, {"module": "choreonoid.body"}),
    Case("body 5,000-digit jointId", "digits.body", long_joint_id_body,
         {"module": "choreonoid.body"}),
)

#: Cases whose file tries to run code; the sentinel path is filled in by the test.
CODE_CASES: tuple[tuple[str, str, Callable[[str], bytes], dict[str, Any]], ...] = (
    ("pickle os.system", "run.pkl", os_system_pickle, {"pickle": True}),
    ("motion list python tag", "run.yaml", python_tag_list, LIST),
    ("seq python tag", "run.seq", python_tag_seq, SEQ),
)


def joints_seq(labels: list[str]) -> bytes:
    """A .seq of 10 frames of joint values with these labels (``part_labels``)."""
    import numpy as np

    import motionkit as mk

    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", np.zeros((10, len(labels))),
                        mk.Timeline.uniform(30, 10), labels=labels))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "joints.seq"
        mk.write(path, motion)
        return path.read_bytes()


#: Joint names that matplotlib would parse as mathtext: one fails it, one recurses 40 deep.
MATHTEXT_NAMES = ["$\\frac{$", "$" + "\\frac{" * 40 + "}" * 40 + "$"]
