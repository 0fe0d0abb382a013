"""Only the viewer's own pages may talk to it: a guard on viser's HTTP and WebSocket handshakes.

viser checks neither ``Origin`` nor ``Host``, so any web page open in the user's browser
could open a WebSocket to ``127.0.0.1:PORT`` and read the scene, and a DNS-rebinding page
could do the same under its own name. viser builds its server with
``websockets.asyncio.server.serve`` and offers no hook, so :func:`install` wraps that
function once: for viser's own servers (and no other) every request must name this
server in ``Host`` (:func:`allowed`), and a WebSocket upgrade whose ``Origin`` is not the
page's own (``http://`` + its ``Host``) is refused with 403 before viser sees it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from typing import Any

#: Names of this machine's loopback interface as a browser writes them in ``Host``.
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
#: Addresses that mean "every interface".
_WILDCARD = frozenset({"", "0.0.0.0", "::", "[::]"})

Handler = Callable[[Any, Any], Any]


def _name(host_header: str) -> str:
    """The name part of a ``Host`` value (``[::1]:8080`` → ``[::1]``, ``a:80`` → ``a``);
    an empty name for what a browser cannot send."""
    text = host_header.strip().lower()
    found = re.fullmatch(r"(\[[^\]]*\]|[^:\[\]]*)(?::\d*)?", text)
    return found.group(1) if found else ""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def allowed(host: str) -> Callable[[str], bool]:
    """Whether a ``Host`` value names a server started on ``host``, whatever the port (a
    forwarded port, or 80 left out, is still this server). A DNS name is what rebinding
    needs, so only the names this server answers to pass: the loopback names for a loopback
    server; for every interface, IP literals and this machine's own names; else ``host``."""
    bound = host.strip().lower()
    if _is_ip(bound):
        bound = str(ipaddress.ip_address(bound.strip("[]")))
    if bound in _LOOPBACK:
        names = set(_LOOPBACK)
    elif bound in _WILDCARD:
        names = set(_LOOPBACK) | {socket.gethostname().lower(), socket.getfqdn().lower()}
    else:
        names = {bound, f"[{bound}]"}

    def check(host_header: str) -> bool:
        name = _name(host_header)
        return name in names or (bound in _WILDCARD and _is_ip(name))

    return check


def guard(inner: Handler | None, host: str) -> Handler:
    """A ``process_request`` that refuses a foreign ``Host``, and a WebSocket upgrade from a
    page of another origin than the server's own, then hands the request to ``inner``
    (viser's file server), if any."""
    ours = allowed(host)

    def check(connection: Any, request: Any) -> Any:
        host_header = request.headers.get("Host") or ""
        if not ours(host_header):
            return connection.respond(403, "Forbidden: unknown Host\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() != f"http://{host_header.strip().lower()}":
            return connection.respond(403, "Forbidden: foreign Origin\n")
        return inner(connection, request) if inner is not None else None

    return check


def install() -> None:
    """Wrap ``websockets.asyncio.server.serve`` so that servers viser starts get :func:`guard`
    (once per process; other servers are left as they are)."""
    import websockets.asyncio.server as server

    real = server.serve
    if getattr(real, "motionkit_guard", False):
        return

    def serve(handler: Any, host: str | None = None, port: int | None = None,
              *args: Any, **kwargs: Any) -> Any:
        if getattr(handler, "__module__", "").startswith("viser."):
            kwargs["process_request"] = guard(kwargs.get("process_request"), host or "")
        return real(handler, host, port, *args, **kwargs)

    serve.motionkit_guard = True  # type: ignore[attr-defined]
    server.serve = serve  # type: ignore[assignment,misc]
