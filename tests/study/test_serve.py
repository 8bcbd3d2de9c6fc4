"""The study server against connections that idle, pile up or flood the log, and the
listening sockets that keep small responses from waiting on a delayed ACK."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

import httpx
import pytest

from rapport.study import Quiet, StudyCreated, start_study_server
from rapport.study import bind as study_bind
from rapport.view import bind as view_bind

from .helpers import scripted_roles

pytestmark = pytest.mark.attack


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    return sock


def _status(sock: socket.socket) -> bytes:
    """Read one whole response (headers and a Content-Length body); its status line."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )  # fmt: skip
    while len(body) < length:
        body += sock.recv(65536)
    return head.split(b"\r\n")[0]


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes the connection (within the socket's timeout)."""
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_request_whose_headers_never_end_is_closed(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles(), header_timeout=0.3) as url:
        silent, partial = _connect(url), _connect(url)
        partial.sendall(b"GET /p/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1")
        assert _closed_by_server(silent) and _closed_by_server(partial)
        kept = _connect(url)  # a kept-alive connection is timed again for its next request
        kept.sendall(b"GET /p/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"404" in _status(kept)
        kept.sendall(b"GET /p/x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert _closed_by_server(kept)
        assert httpx.get(f"{url}/p/{study.tokens['p01']}").status_code == 200


def test_connections_past_the_limit_are_closed_and_the_rest_served(
    study: StudyCreated,
) -> None:
    with start_study_server(
        study.study_dir, models=scripted_roles(), limit=8, header_timeout=60
    ) as url:
        idle = [_connect(url) for _ in range(8)]
        extra = _connect(url)
        assert _closed_by_server(extra)
        for sock in idle[:2]:
            sock.close()
        with httpx.Client(timeout=30) as client:
            for attempt in range(100):  # until the server has seen the two go
                try:
                    page = client.get(f"{url}/p/{study.tokens['p01']}")
                    break
                except httpx.TransportError:
                    if attempt == 99:
                        raise
        assert page.status_code == 200
        for sock in idle[2:]:
            sock.close()


def test_a_repeating_message_is_logged_once_in_a_while(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("rapport.test.quiet")
    quiet = Quiet(every=3600)
    logger.addFilter(quiet)
    try:
        with caplog.at_level(logging.WARNING, logger="rapport.test.quiet"):
            for n in range(10_000):
                logger.warning("socket.accept() out of system resource (%d)", n)
            logger.warning("another message")
    finally:
        logger.removeFilter(quiet)
    assert [r.getMessage() for r in caplog.records] == [
        "socket.accept() out of system resource (0)",
        "another message",
    ]
    quiet.every = 0.0  # the next one through says how many it stood for
    template = "socket.accept() out of system resource (%d)"
    record = logging.LogRecord("rapport.test.quiet", logging.WARNING, "", 0, template, (1,), None)
    assert quiet.filter(record) and "9999 more like it left out" in record.getMessage()


@pytest.mark.parametrize("bind", [lambda: study_bind("127.0.0.1", 0), lambda: view_bind(0)])
def test_accepted_connections_send_without_delay(bind: Callable[[], socket.socket]) -> None:
    """asyncio sets TCP_NODELAY on an accepted socket only when the listening socket's
    proto says TCP; without it a kept-alive response waits ~40 ms for a delayed ACK."""
    listening = bind()

    async def accepted_nodelay() -> int:
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                found.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listening)
        port = listening.getsockname()[1]
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(found, 30)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(accepted_nodelay()) != 0
