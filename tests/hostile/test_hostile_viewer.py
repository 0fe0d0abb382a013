"""The live viewer talks only to its own pages: a real WebSocket client on 127.0.0.1 with a
foreign ``Origin`` (a page of another site in the user's browser), and a request with a
foreign ``Host`` (a DNS-rebinding page), are refused with 403; the viewer's own pages, also
through a forwarded port or from another machine by address, are not. The offline page runs
nothing but its own player and loads nothing."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import corpus_file, require_peer
from motionkit.view import LiveView, build_scene
from motionkit.view._origin import allowed


@pytest.fixture(scope="module")
def live() -> Iterator[LiveView]:
    require_peer("viser")
    view = LiveView(build_scene(corpus_file("evo", "freiburg1_xyz-groundtruth.txt")), port=0)
    try:
        yield view
    finally:
        view.stop()


def _status(live: LiveView, host: str, origin: str | None = None, upgrade: bool = False) -> int:
    """The status line's code of one raw HTTP request to the viewer."""
    lines = ["GET / HTTP/1.1", f"Host: {host}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    if upgrade:
        lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
    with socket.create_connection((live.host, live.port), timeout=30) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        reply = connection.recv(4096)
    return int(reply.split(b" ", 2)[1])


def test_a_websocket_from_another_origin_is_refused(live: LiveView) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    address = f"ws://127.0.0.1:{live.port}/"
    with pytest.raises(InvalidStatus) as refused:
        connect(address, origin="http://evil.example", open_timeout=30)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    with connect(address, origin=f"http://127.0.0.1:{live.port}",  # type: ignore[arg-type]
                 open_timeout=30):
        pass  # the viewer's own page connects


@pytest.mark.parametrize("host, origin, upgrade, status", [
    ("127.0.0.1:{port}", None, False, 200),
    ("localhost:{port}", None, False, 200),
    ("localhost:9999", None, False, 200),  # a forwarded port (ssh -L 9999:localhost:PORT)
    ("evil.example:{port}", None, False, 403),  # DNS rebinding: the page's name, our address
    ("127.0.0.1:{port}", "http://evil.example", True, 403),
    ("evil.example:{port}", "http://evil.example:{port}", True, 403),
    ("127.0.0.1:{port}", "null", True, 403),  # a sandboxed frame or a file:// page
    ("localhost:9999", "http://localhost:9999", True, 101),  # the forwarded page itself
])
def test_requests_name_the_viewer_or_are_refused(live: LiveView, host: str, origin: str | None,
                                                 upgrade: bool, status: int) -> None:
    fill = {"port": live.port}
    assert _status(live, host.format(**fill), origin and origin.format(**fill), upgrade) == status


@pytest.mark.parametrize("bound, host, passes", [
    ("127.0.0.1", "127.0.0.1:8080", True),
    ("127.0.0.1", "LOCALHOST", True),  # port 80 is left out of Host
    ("127.0.0.1", "[::1]:8080", True),
    ("127.0.0.1", "192.168.1.5:8080", False),  # not a loopback name
    ("127.0.0.1", "evil.example:8080", False),
    ("0.0.0.0", "192.168.1.5:8080", True),  # from another machine, by address
    ("0.0.0.0", "[fe80::1]:8080", True),
    ("0.0.0.0", f"{socket.gethostname()}:8080", True),
    ("0.0.0.0", "evil.example:8080", False),
    ("::", "10.0.0.2:8080", True),
    ("192.168.1.5", "192.168.1.5:8080", True),
    ("192.168.1.5", "evil.example:8080", False),
    ("127.0.0.1", "", False),
    ("127.0.0.1", "[::1]evil.example", False),  # nothing but a port may follow the brackets
    ("FE80::0002", "[fe80::2]:8080", True),  # a bound address in any spelling
])
def test_which_host_headers_name_the_viewer(bound: str, host: str, passes: bool) -> None:
    assert allowed(bound)(host) is passes


def test_the_offline_page_runs_only_its_own_player_and_loads_nothing(tmp_path: Path) -> None:
    """A name that tries to close the data block and open a script stays text: the page's only
    executable script is the player, whose hash is the only one the Content-Security-Policy
    allows; no element loads anything (no src, href or url(), no connection allowed)."""
    require_peer("viser")
    import motionkit as mk
    from motionkit.view import write_html
    from motionkit.view._player import PLAYER_JS

    evil = '</script><script>alert(1)</script>"><img src=https://evil.example/x>&lt;'
    pose = np.tile([0.0, 0, 0, 0, 0, 0, 1], (3, 1))
    motion = mk.Motion({"root": mk.Track("root", "pose", pose, mk.Timeline.uniform(10.0, 3))},
                       meta={"name": evil})
    text = write_html(build_scene(motion), tmp_path / "evil.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", text, re.S)
    kinds = [attributes.strip() for attributes, _ in scripts]
    assert kinds == ['type="application/json" id="motionkit-scene"',
                     'type="application/octet-stream" id="motionkit-data"', ""]
    assert scripts[2][1] == PLAYER_JS
    digest = base64.b64encode(hashlib.sha256(PLAYER_JS.encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text)
    assert policy and f"script-src 'sha256-{digest}'" in policy.group(1)
    assert "default-src 'none'" in policy.group(1) and "connect-src 'none'" in policy.group(1)
    markup = text.replace(scripts[0][1], "").replace(html.escape(evil), "")  # escaped text aside
    assert "evil.example" not in markup and "<img" not in markup
    assert not re.search(r"\s(src|href)=|url\(|@import|https?:", markup)
    assert json.loads(scripts[0][1])["actors"][0]["name"] == evil  # the name, as data
