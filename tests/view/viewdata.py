"""Read back what an exported viewer page embeds: the recorded scene messages and their arrays."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Recording:
    duration: float
    messages: list[tuple[float, dict[str, Any]]]
    buffers: list[bytes]

    def array(self, placeholder: dict[str, Any]) -> np.ndarray:
        return np.frombuffer(self.buffers[placeholder["__binary_index"]], dtype=placeholder["dtype"])

    def values(self, node: str, prop: str) -> list[tuple[float, np.ndarray]]:
        """(time, array) of every value ``prop`` of scene node ``node`` took, in order."""
        out = []
        for time, message in self.messages:
            if message.get("name") != node:
                continue
            props = message.get("props") or message.get("updates") or {}
            if prop in props:
                out.append((time, self.array(props[prop])))
        return out


def decode(page: Path) -> Recording:
    """The scene recording inside a self-contained viewer page (base64 → zstd → msgpack +
    8-byte-aligned binary buffers)."""
    import msgspec
    import zstandard

    text = page.read_text(encoding="utf-8")
    found = re.search(r'__VISER_EMBED_DATA__="([A-Za-z0-9+/=]*)"', text)
    assert found, "the page embeds its scene"
    data = base64.b64decode(found.group(1))
    size = int.from_bytes(data[:8], "little")
    raw = zstandard.ZstdDecompressor().decompress(data[8:], max_output_size=size)
    head = int.from_bytes(raw[:8], "little")
    doc = msgspec.msgpack.decode(raw[8:8 + head])
    offset, buffers = 8 + head, []
    for length in doc["binaryBufferLengths"]:
        offset += (8 - offset % 8) % 8
        buffers.append(raw[offset:offset + length])
        offset += length
    return Recording(float(doc["durationSeconds"]), [(float(t), m) for t, m in doc["messages"]],
                     buffers)
