"""A loopback OpenAI-compatible chat server for tests and throughput benchmarks.

It answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) on 127.0.0.1 only, after a
configurable latency plus a per-token delay, with text or with a JSON value that fits the
requested schema. It is bounded (at most ``max_connections`` open connections, bodies up to
``max_body_bytes``) and stops by itself after ``idle_timeout_s`` without a request.

In a test:

    with run_loopback(LoopbackSettings(latency_s=0.2)) as server:
        api = OpenAIAPI("loopback", base_url=server.base_url)

From a shell (prints the base URL on its first line, then serves until idle):

    python -m rapport.llm._loopback --latency 0.2 --tokens-per-s 50 --idle-timeout 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}


@dataclass(frozen=True)
class LoopbackSettings:
    """How the loopback server behaves."""

    latency_s: float = 0.2
    """Seconds before every reply (the time to first token)."""
    tokens_per_s: float = 0.0
    """Generation speed: each completion token adds ``1 / tokens_per_s`` s; 0 adds nothing."""
    completion_tokens: int = 16
    """Words in a text reply (capped by the request's ``max_tokens``)."""
    max_connections: int = 1024
    """Connections served at once; more are closed at once."""
    max_body_bytes: int = 8 << 20
    """Largest request body taken."""
    idle_timeout_s: float = 120.0
    """The server stops by itself after this long without a request."""
    model: str = "loopback"


Reply = str | dict[str, Any]
Responder = Callable[[dict[str, Any]], Reply | Awaitable[Reply]]
"""Makes the reply from a request body: its text, or the whole assistant message (with
``tool_calls``); may be a coroutine (the default: `default_reply`)."""


class LoopbackServer:
    """The server; `start` it on a running event loop, or use `run_loopback`."""

    def __init__(
        self,
        settings: LoopbackSettings | None = None,
        *,
        port: int = 0,
        responder: Responder | None = None,
    ) -> None:
        self.settings = settings or LoopbackSettings()
        words = self.settings.completion_tokens
        self.responder = responder or (lambda request: default_reply(request, words=words))
        self.port = port
        self.requests = 0
        """Completions answered so far."""
        self.in_flight = 0
        self.peak_in_flight = 0
        """The most completions being answered at once."""
        self._connections = 0
        self._last = time.monotonic()
        self._server: asyncio.Server | None = None
        self._stopped: asyncio.Event | None = None
        self._watcher: asyncio.Future[None] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    async def start(self) -> None:
        """Bind 127.0.0.1 and serve in the background of the running loop."""
        self._stopped = asyncio.Event()
        self._server = await asyncio.start_server(
            self._connection, HOST, self.port, limit=self.settings.max_body_bytes, backlog=1024
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._last = time.monotonic()
        self._watcher = asyncio.ensure_future(self._watch_idle())

    async def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._stopped is not None:
            self._stopped.set()

    async def wait_stopped(self) -> None:
        """Return once the server stopped (by `stop` or idling)."""
        assert self._stopped is not None, "start the server first"
        await self._stopped.wait()

    async def _watch_idle(self) -> None:
        timeout = self.settings.idle_timeout_s
        while self._server is not None:
            idle = time.monotonic() - self._last
            if idle >= timeout and self.in_flight == 0:
                await self.stop()
                return
            await asyncio.sleep(min(max(timeout - idle, 0.05), 1.0))

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._connections >= self.settings.max_connections:
            writer.close()
            return
        self._connections += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # the server stops
            pass
        finally:
            self._connections -= 1
            writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request on a kept-alive connection; False when the connection ends."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, *_ = [*lines[0].split(" "), "", ""]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])
        }
        length = int(headers.get("content-length", "0") or 0)
        if length > self.settings.max_body_bytes:
            await _send(writer, 413, {"error": {"message": "request body too large"}})
            return False
        body = await reader.readexactly(length) if length else b""
        self._last = time.monotonic()
        status, payload, streamed = await self._route(method, path.split("?", 1)[0], body)
        if streamed:
            await self._send_stream(writer, payload)
            return False  # the streamed body ends with the connection
        await _send(writer, status, payload)
        return headers.get("connection", "").lower() != "close"

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any], bool]:
        """Status, payload, and whether it is sent as a stream of server-sent events."""
        if method == "GET" and path.rstrip("/").endswith("/models"):
            models = {"object": "list", "data": [{"id": self.settings.model, "object": "model"}]}
            return 200, models, False
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {method} {path}"}}, False
        try:
            request = json.loads(body)
        except ValueError:
            return 400, {"error": {"message": "the body is not JSON"}}, False
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            return 400, {"error": {"message": "messages must be a list"}}, False
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        streamed = request.get("stream") is True
        try:
            return 200, await self._complete(request, paced=not streamed), streamed
        finally:
            self.in_flight -= 1
            self.requests += 1
            self._last = time.monotonic()

    async def _complete(self, request: dict[str, Any], *, paced: bool = True) -> dict[str, Any]:
        reply = self.responder(request)
        if inspect.isawaitable(reply):
            reply = await reply
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        text = str(message.get("content") or "")
        completion_tokens = max(1, len(text.split()))
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in request["messages"]) // 4
        delay = self.settings.latency_s
        if paced and self.settings.tokens_per_s > 0:
            delay += completion_tokens / self.settings.tokens_per_s
        await asyncio.sleep(delay)
        return {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model") or self.settings.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    async def _send_stream(self, writer: asyncio.StreamWriter, completion: dict[str, Any]) -> None:
        """A completion as OpenAI streams it: one chunk per word of its text (paced at
        ``tokens_per_s``), then the usage, then ``[DONE]``; the connection closes after."""
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        writer.write(head.encode())
        text = str(completion["choices"][0]["message"].get("content") or "")
        base = {k: completion[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        pace = 1 / self.settings.tokens_per_s if self.settings.tokens_per_s > 0 else 0.0
        for piece in re.findall(r"\s*\S+\s*|\s+", text):
            delta = {"index": 0, "delta": {"role": "assistant", "content": piece}}
            _event(writer, {**base, "choices": [delta]})
            await writer.drain()
            await asyncio.sleep(pace)
        end = {"index": 0, "delta": {}, "finish_reason": "stop"}
        _event(writer, {**base, "choices": [end]})
        _event(writer, {**base, "choices": [], "usage": completion["usage"]})
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


def _event(writer: asyncio.StreamWriter, payload: dict[str, Any]) -> None:
    writer.write(b"data: " + json.dumps(payload).encode() + b"\n\n")


async def _send(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: keep-alive\r\n\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()


def default_reply(request: dict[str, Any], *, words: int = 16) -> str:
    """A JSON value fitting the request's schema, else `words` words of text (at most
    the request's ``max_tokens``)."""
    schema = requested_schema(request.get("response_format"))
    if schema is not None:
        return json.dumps(schema_example(schema))
    words = min(words, int(request.get("max_tokens") or words))
    topic = str(request["messages"][-1].get("content") or "")[:40] if request["messages"] else ""
    reply = f"Here is a short answer about {topic}".split()
    return " ".join((reply + ["and", "more"] * words)[: max(1, words)])


def requested_schema(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema an OpenAI ``response_format`` asks for (either form), or None."""
    if not isinstance(response_format, dict):
        return None
    inner = response_format.get("json_schema")
    schema = inner.get("schema") if isinstance(inner, dict) else response_format.get("schema")
    return schema if isinstance(schema, dict) else None


def schema_example(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A small value that fits a JSON schema (``$ref``, ``anyOf``, enums, bounds)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return schema_example(root.get("$defs", {}).get(name, {}), root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_example(schema[key][0], root)
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: schema_example(sub, root) for name, sub in props.items()}
    if kind == "array":
        return [schema_example(schema.get("items", {}), root)] * int(schema.get("minItems", 0))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength", 2))


@contextlib.contextmanager
def run_loopback(
    settings: LoopbackSettings | None = None,
    *,
    responder: Responder | None = None,
    port: int = 0,
) -> Iterator[LoopbackServer]:
    """Serve on a background thread with its own event loop for the block's duration.

    Raises:
        OSError: the port cannot be bound.
    """
    server = LoopbackServer(settings, responder=responder, port=port)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failed: list[OSError] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except OSError as exc:
            failed.append(exc)
            loop.close()
            ready.set()
            return
        ready.set()
        loop.run_until_complete(server.wait_stopped())
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=serve, name="rapport-loopback", daemon=True)
    thread.start()
    ready.wait(10)
    if failed:
        thread.join(10)
        raise failed[0]
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        thread.join(10)


def main(argv: list[str] | None = None) -> None:
    """Serve from a shell until idle; prints the base URL first."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--tokens-per-s", type=float, default=0.0)
    parser.add_argument("--completion-tokens", type=int, default=16)
    parser.add_argument("--idle-timeout", type=float, default=120.0)
    parser.add_argument("--max-connections", type=int, default=1024)
    args = parser.parse_args(argv)
    settings = LoopbackSettings(
        latency_s=args.latency,
        tokens_per_s=args.tokens_per_s,
        completion_tokens=args.completion_tokens,
        idle_timeout_s=args.idle_timeout,
        max_connections=args.max_connections,
    )

    async def serve() -> None:
        server = LoopbackServer(settings, port=args.port)
        await server.start()
        print(server.base_url, flush=True)
        await server.wait_stopped()
        print(json.dumps({"requests": server.requests, "peak_in_flight": server.peak_in_flight}))

    asyncio.run(serve())


if __name__ == "__main__":
    main()
