"""Serving the memory service with uvicorn: 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

HOST = "127.0.0.1"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket with Nagle off for its connections (port 0: any free port).

    Raises:
        OSError: the address is taken or not allowed.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(1024)
    return sock


def server(app: FastAPI) -> uvicorn.Server:
    """A uvicorn server for the app: bounded connections and header waits, no access log."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        limit_concurrency=1000,
        timeout_keep_alive=5,
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


@contextmanager
def running(app: FastAPI, host: str = HOST, port: int = 0) -> Iterator[str]:
    """Serve the app in a thread while the block runs; yields its base URL. Returns once
    the server has started (its `started` flag, set by uvicorn) and stops it on exit."""
    sock = bind(host, port)
    srv = server(app)
    ready = threading.Event()
    startup = srv.startup

    async def startup_then_signal(sockets: list[socket.socket] | None = None) -> None:
        await startup(sockets=sockets)
        ready.set()

    srv.startup = startup_then_signal  # type: ignore[method-assign]
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        if not ready.wait(60):
            raise RuntimeError("the memory service did not start")
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(30)
        sock.close()
