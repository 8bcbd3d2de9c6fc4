"""What every request to the viewer passes through: a Host check and security headers.

The viewer listens on 127.0.0.1 only, but a page on any site can make a browser send requests
there under a name of its own that resolves to 127.0.0.1 (DNS rebinding) and then read the
answers as same-origin. Such a request carries that name in its ``Host`` header, so only the
loopback names, at the port the server is bound to, are answered.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost"})
"""The host names the viewer answers to."""

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def host_allowed(host: str, port: int | None) -> bool:
    """Whether a ``Host`` header names this server: a loopback name and, when it gives a
    port, the port the server listens on."""
    name, colon, given = host.rpartition(":")
    if not colon:
        name, given = host, ""
    if name.lower() not in LOCAL_NAMES:
        return False
    return not given or (given.isdigit() and port is not None and int(given) == port)


class LocalOnly:
    """ASGI middleware: answers 421 to a request whose Host is not this server's loopback
    address, and adds the security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        server = scope.get("server")
        port = server[1] if server else None
        if not host_allowed(Headers(scope=scope).get("host", ""), port):
            await send(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS],
                }
            )
            await send({"type": "http.response.body", "body": b"unknown host\n"})
            return

        async def headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, headed)
