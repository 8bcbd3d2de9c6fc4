"""A loopback OpenAI-compatible chat server for outage tests (127.0.0.1 only).

It answers ``POST /v1/chat/completions`` with `runner_fakes.aware_reply` of the messages,
so a run against it scores exactly like one on the scripted ``fake/aware`` model, and
``GET /v1/models`` (the check a run makes before it starts) with its one model. With
``stop_after=K`` it stops by itself after answering K requests, as a server that goes
down mid-run: the port then refuses connections until `start` is called again. With
``stop_after=0`` it stays up and refuses every completion (HTTP 503).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runner_fakes import aware_reply

from rapport.llm import Message, Request


class LoopbackServer:
    """Start with `start`, stop with `stop` (or by itself after ``stop_after`` answers)."""

    def __init__(self, port: int = 0, *, stop_after: int | None = None) -> None:
        self.port = port
        self.stop_after = stop_after
        self.answered = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, *, stop_after: int | None = None) -> LoopbackServer:
        self.stop_after = stop_after
        self.answered = 0
        server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = [
            Message(role=m["role"], content=m.get("content") or "") for m in body["messages"]
        ]
        text = aware_reply(Request(messages=messages))
        return {
            "id": "loop",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "loop"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if not self.path.rstrip("/").endswith("/models"):
                    self.send_error(404, "no such route")
                    return
                payload = json.dumps(
                    {"object": "list", "data": [{"id": "loop", "object": "model"}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with owner._lock:
                    gone = owner.stop_after is not None and owner.answered >= owner.stop_after
                if gone:  # going down: nothing more is answered, whatever the timing
                    self.send_error(503, "server going down")
                    return
                payload = json.dumps(owner._answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
                with owner._lock:
                    owner.answered += 1
                    down = owner.stop_after is not None and owner.answered >= owner.stop_after
                if down:
                    threading.Thread(target=owner.stop, daemon=True).start()

        return Handler
