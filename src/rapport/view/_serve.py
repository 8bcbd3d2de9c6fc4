"""Serving the viewer with uvicorn, on the loopback interface only."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from rapport.report import is_run_dir

from ._app import create_app
from ._data import RunData
from ._folder import RunFolder, create_folder_app
from ._guard import LocalOnly

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free port).

    Raises:
        OSError: the port is taken or not allowed.
    """
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on an accepted socket only when
    # its proto says TCP, and without it every keep-alive response waits for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def _server(app: ASGIApp) -> uvicorn.Server:
    config = uvicorn.Config(LocalOnly(app), log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config)


def serve(data: RunData | RunFolder, sock: socket.socket) -> None:
    """Serve the viewer of a run (or of a folder of runs) on a bound socket until
    interrupted (blocking)."""
    _server(_app(data)).run(sockets=[sock])


def _app(data: RunData | RunFolder) -> ASGIApp:
    if isinstance(data, RunFolder):
        return create_folder_app(data)
    return create_app(data.run_dir, data=data)


def open_runs(path: str | Path) -> RunData | RunFolder:
    """A run dir, or a folder whose subfolders are run dirs, opened for the viewer.

    Raises:
        FileNotFoundError: neither a run nor a folder of runs.
    """
    if is_run_dir(path):
        return RunData(path)
    if Path(path).is_dir():
        return RunFolder(path)
    raise FileNotFoundError(f"no run found in {path}")


@contextmanager
def start_server(run_dir: str | Path, *, port: int = 0) -> Iterator[str]:
    """Run the viewer of a run dir (or of a folder of runs) in a background thread; yields
    its base URL (tests, benchmarks).

    Raises:
        FileNotFoundError: the dir holds no run and no folder of runs.
        OSError: the port cannot be bound.
    """
    data = open_runs(run_dir)
    sock = bind(port)
    server = _server(_app(data))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise OSError("the viewer stopped while starting")
        time.sleep(0.01)
    try:
        yield f"http://{HOST}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        data.close()
