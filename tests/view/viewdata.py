"""Read back what an exported viewer page embeds: the scene description and its typed arrays."""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_KINDS = {"f": np.float32, "d": np.float64, "u": np.uint32, "i": np.int32}


@dataclass
class PageData:
    meta: dict[str, Any]
    blob: bytes

    def array(self, ref: list[Any]) -> np.ndarray:
        """The typed array a ``[kind, byte offset, count]`` reference names."""
        kind, offset, count = ref
        return np.frombuffer(self.blob, dtype=_KINDS[kind], count=count, offset=offset)

    def poses(self, actor: int) -> np.ndarray:
        """An actor's link poses per shown frame ``(F, L, 7)``: x y z qw qx qy qz."""
        entry = self.meta["actors"][actor]
        return self.array(entry["poses"]).reshape(-1, entry["links"], 7)


def decode(page: Path) -> PageData:
    """The scene inside a self-contained viewer page (JSON + base64 → zlib → typed arrays)."""
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="motionkit-scene">(.*?)</script>', text, re.S)
    data = re.search(r'<script type="application/octet-stream" id="motionkit-data">'
                     r'([A-Za-z0-9+/=]*)</script>', text)
    assert found and data, "the page embeds its scene"
    return PageData(json.loads(found.group(1)), zlib.decompress(base64.b64decode(data.group(1))))
