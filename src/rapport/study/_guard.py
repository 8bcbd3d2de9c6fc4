"""What every request passes through: bounded bodies, security headers, CSRF tokens, forms."""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 64 * 1024
"""The largest request body taken (bytes); a bigger one is answered 413."""

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class _TooLarge(Exception):
    pass


class Guard:
    """ASGI middleware: refuses bodies over `MAX_BODY` (declared or streamed) with 413 and
    adds the security headers to every response."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _plain(send, 413, "request too large")
            return
        seen = 0
        started = False

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise _TooLarge
            return message

        async def headed(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        try:
            await self.app(scope, bounded, headed)
        except _TooLarge:
            if not started:
                await _plain(send, 413, "request too large")


async def _plain(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters but tab and newline: NUL, ESC (a terminal's escape sequences) ..."""


def _checked(name: str, value: str) -> str:
    """A field's text with a browser's CRLF line breaks as LF.

    Raises:
        HTTPException: 400 when it holds another control character.
    """
    value = value.replace("\r\n", "\n")
    found = _CONTROL.search(value)
    if found:
        code = f"U+{ord(found.group()):04X}"
        raise HTTPException(400, f"{name} holds a control character ({code}); remove it")
    return value


def csrf_token(secret: bytes, subject: str) -> str:
    """The CSRF token of a participant's (or the researcher's) forms."""
    return hmac.new(secret, f"csrf:{subject}".encode(), hashlib.sha256).hexdigest()


async def form(request: Request, secret: bytes, subject: str) -> dict[str, str]:
    """A URL-encoded form whose CSRF token matches; each field's first value, its line
    breaks as LF.

    Raises:
        HTTPException: 403 for a missing or wrong CSRF token, 415 for another encoding,
            400 for text that is not UTF-8 (percent-encoded too) or holds a control
            character other than a tab or a line break.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    body = await request.body()
    if body and kind != "application/x-www-form-urlencoded":
        raise HTTPException(415, "forms are sent URL-encoded")
    try:
        fields = parse_qs(
            body.decode("utf-8"), keep_blank_values=True, max_num_fields=50, errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, "the form could not be read (it is not UTF-8 text)") from None
    values = {k: _checked(k, v[0]) for k, v in fields.items()}
    sent = values.pop("csrf", "")
    if not hmac.compare_digest(sent.encode(), csrf_token(secret, subject).encode()):
        raise HTTPException(403, "this form has expired; reload the page and try again")
    return values
