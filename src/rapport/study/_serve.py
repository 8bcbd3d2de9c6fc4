"""Serving a study with uvicorn: 127.0.0.1 unless told otherwise.

A study faces people for a week or more, so the server holds up against connections that
never finish a request: each must send its request line and headers within
`HEADER_TIMEOUT_S` (and again for each request on a kept-alive connection), connections
beyond `max_connections` are closed at once so the process never runs out of file
descriptors, and a message that repeats (a flood of refused connections) is logged once in
a while with how many were left out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from rapport.llm import ModelRoles

from ._app import create_app
from ._live import StudyRuntime
from ._reply import RETRY_DELAYS_S

HOST = "127.0.0.1"

HEADER_TIMEOUT_S = 20.0
"""How long a connection may take to send a request's line and headers."""

LATE_S = 1.0
"""A header timer that fires this late finds the event loop behind: the request's bytes may
be queued behind other work, so the connection is judged again a timeout later."""

KEEP_ALIVE_S = 5
"""How long an idle kept-alive connection stays open between requests."""

FD_RESERVE = 64
"""File descriptors kept free of connections (the stores, the model, logs)."""

LOG_EVERY_S = 10.0
"""A repeating log message is written at most once in this many seconds."""

log = logging.getLogger(__name__)


def max_connections() -> int:
    """The most connections served at once: the descriptors this process may open, after
    raising its soft limit to the hard one, less `FD_RESERVE`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    limit = 65_536 if soft == resource.RLIM_INFINITY else soft
    return max(16, min(limit, 65_536) - FD_RESERVE)


class _Guarded(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a header timeout and a connection limit."""

    limit = 1000
    """The most connections at once (`_server` sets it)."""
    header_timeout = HEADER_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limit:
            log.warning("connection limit (%d) reached: closing new connections", self.limit)
            transport.abort()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self._arm()  # a new request begins: its headers are timed
        super().data_received(data)
        if self.cycle is not cycle:
            self._disarm()  # its headers are complete

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = self.loop.call_later(self.header_timeout, self._too_slow)
            self._due = self.loop.time() + self.header_timeout

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if self.loop.time() - self._due > LATE_S:
            self._arm()  # the loop is behind, not necessarily the client
        elif not self.transport.is_closing():
            self.transport.close()


class Quiet(logging.Filter):
    """Lets a message through at most once per `LOG_EVERY_S` (by its template), saying how
    many like it were left out in between."""

    def __init__(self, every: float = LOG_EVERY_S) -> None:
        super().__init__()
        self.every = every
        self._last: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        now = time.monotonic()
        with self._lock:
            last, left_out = self._last.get(key, (-self.every, 0))
            if now - last < self.every:
                self._last[key] = (last, left_out + 1)
                return False
            self._last[key] = (now, 0)
        if left_out:
            record.msg = f"{record.msg} ({left_out} more like it left out)"
        return True


QUIET = Quiet()
QUIETED = ("asyncio", "uvicorn.error", __name__)
"""The loggers a flood could come from: the accept loop, the HTTP protocol, this module."""


def quiet_logs() -> None:
    """Keep repeating messages of the server's loggers from flooding the log."""
    for name in QUIETED:
        logger = logging.getLogger(name)
        if QUIET not in logger.filters:
            logger.addFilter(QUIET)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port).

    Raises:
        OSError: the address is taken or not allowed.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on an accepted socket only when
    # its proto says TCP, and without it every keep-alive response waits for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(512)
    return sock


def _server(
    runtime: StudyRuntime,
    *,
    proxy: bool = False,
    limit: int | None = None,
    header_timeout: float = HEADER_TIMEOUT_S,
) -> uvicorn.Server:
    protocol = type(
        "GuardedH11",
        (_Guarded,),
        {"limit": limit or max_connections(), "header_timeout": header_timeout},
    )
    quiet_logs()
    config = uvicorn.Config(
        create_app(runtime),
        http=protocol,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=proxy,
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


def serve(runtime: StudyRuntime, sock: socket.socket, *, proxy: bool = False) -> None:
    """Serve the study on a bound socket until interrupted (blocking)."""
    _server(runtime, proxy=proxy).run(sockets=[sock])


@contextmanager
def start_study_server(
    study_dir: str | Path,
    *,
    models: ModelRoles | None = None,
    port: int = 0,
    retry_delays: Sequence[float] = RETRY_DELAYS_S,
    limit: int | None = None,
    header_timeout: float = HEADER_TIMEOUT_S,
) -> Iterator[str]:
    """Serve a study in a background thread; yields its base URL (tests, benchmarks).

    Args:
        study_dir: the study dir.
        models: model roles instead of those the study names.
        port: the port (0: any free one).
        retry_delays: the waits before each new try of a failed reply.
        limit: the most connections at once (default: `max_connections`).
        header_timeout: seconds a connection has to send a request's headers.

    Raises:
        FileNotFoundError: not a study dir.
        OSError: the port cannot be bound.
    """
    runtime = StudyRuntime(study_dir, models=models, retry_delays=retry_delays)
    sock = bind(HOST, port)
    server = _server(runtime, limit=limit, header_timeout=header_timeout)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise OSError("the study server stopped while starting")
        time.sleep(0.01)
    try:
        yield f"http://{HOST}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        runtime.close()
