"""Only the viewer's own pages may talk to it: a guard on viser's HTTP and WebSocket handshakes.

viser checks neither ``Origin`` nor ``Host``, so any web page open in the user's browser
could open a WebSocket to ``127.0.0.1:PORT`` and read the scene, and a DNS-rebinding page
could do the same under its own name. viser builds its server with
``websockets.asyncio.server.serve`` and offers no hook, so :func:`install` wraps that
function once: for viser's own servers (and no other) every request must name the
address the server was started on in ``Host``, and a WebSocket upgrade whose ``Origin``
is another site's is refused with 403 before viser sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Names a browser may use for a loopback server besides the address it was started on.
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

Handler = Callable[[Any, Any], Any]


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` values of requests to a server started on ``host:port``."""
    names = {f"[{host}]" if ":" in host else host}
    if names & set(_LOOPBACK) or host == "::1":
        names.update(_LOOPBACK)
    return frozenset(f"{name}:{port}" for name in names)


def guard(inner: Handler | None, host: str, port: int) -> Handler:
    """A ``process_request`` that refuses foreign ``Host`` and ``Origin`` headers, then hands
    the request to ``inner`` (viser's file server), if any."""
    hosts = allowed_hosts(host, port)
    origins = frozenset(f"http://{name}" for name in hosts)

    def check(connection: Any, request: Any) -> Any:
        if request.headers.get("Host") not in hosts:
            return connection.respond(403, "Forbidden: unknown Host\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin not in origins:
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
        if getattr(handler, "__module__", "").startswith("viser.") and host and port:
            kwargs["process_request"] = guard(kwargs.get("process_request"), host, port)
        return real(handler, host, port, *args, **kwargs)

    serve.motionkit_guard = True  # type: ignore[attr-defined]
    server.serve = serve  # type: ignore[assignment,misc]
