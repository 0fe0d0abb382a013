"""The live viewer talks only to its own pages: a real WebSocket client on 127.0.0.1 with a
foreign ``Origin`` (a page of another site in the user's browser), and a request with a
foreign ``Host`` (a DNS-rebinding page), are refused with 403."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from conftest import corpus_file, require_peer
from motionkit.view import LiveView, build_scene


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
    ("own", None, False, 200),
    ("localhost", None, False, 200),
    ("evil.example", None, False, 403),  # DNS rebinding: the page's name, our address
    ("own", "http://evil.example", True, 403),
    ("evil.example", "http://evil.example", True, 403),
    ("own", "null", True, 403),  # a sandboxed frame or a file:// page
])
def test_requests_name_the_viewer_or_are_refused(live: LiveView, host: str, origin: str | None,
                                                 upgrade: bool, status: int) -> None:
    name = {"own": "127.0.0.1", "localhost": "localhost"}.get(host, host)
    assert _status(live, f"{name}:{live.port}", origin, upgrade) == status
