"""Serving a study with uvicorn: 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from rapport.llm import ModelRoles

from ._app import create_app
from ._live import StudyRuntime

HOST = "127.0.0.1"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port).

    Raises:
        OSError: the address is taken or not allowed.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(512)
    return sock


def _server(runtime: StudyRuntime, *, proxy: bool = False) -> uvicorn.Server:
    config = uvicorn.Config(
        create_app(runtime),
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=proxy,
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


def serve(runtime: StudyRuntime, sock: socket.socket, *, proxy: bool = False) -> None:
    """Serve the study on a bound socket until interrupted (blocking)."""
    _server(runtime, proxy=proxy).run(sockets=[sock])


@contextmanager
def start_study_server(
    study_dir: str | Path, *, models: ModelRoles | None = None, port: int = 0
) -> Iterator[str]:
    """Serve a study in a background thread; yields its base URL (tests, benchmarks).

    Raises:
        FileNotFoundError: not a study dir.
        OSError: the port cannot be bound.
    """
    runtime = StudyRuntime(study_dir, models=models)
    sock = bind(HOST, port)
    server = _server(runtime)
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
