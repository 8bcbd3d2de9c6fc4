"""Request limits of the memory service: the body size, and requests per tenant per minute."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """ASGI middleware: a request whose body is larger than `max_body` bytes gets 413,
    whether it says its length or streams it."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await _too_large(send)
            return
        # The body is read here, up to the limit, and handed on whole.
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _too_large(send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _too_large(send: Send) -> None:
    body = b'{"detail":"request body too large"}'
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """A token bucket per tenant: `per_min` requests a minute, in bursts of up to `per_min`.

    Args:
        per_min: requests a minute (0: no limit).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, per_min: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_min = per_min
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, tenant: str) -> int:
        """Take one request's token; returns 0, or the seconds to wait when there is none."""
        if self.per_min <= 0:
            return 0
        now = self._clock()
        tokens, then = self._buckets.get(tenant, (float(self.per_min), now))
        tokens = min(float(self.per_min), tokens + (now - then) * self.per_min / 60.0)
        if tokens < 1.0:
            self._buckets[tenant] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) * 60.0 / self.per_min))
        self._buckets[tenant] = (tokens - 1.0, now)
        return 0
