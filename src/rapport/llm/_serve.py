"""Serve a GGUF model over an OpenAI-compatible HTTP API (llama-cpp-python's server).

Used by ``rapport serve-model`` and by tests and adapters of libraries that only speak the
OpenAI protocol. The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._llamacpp import default_threads
from ._loopback import LoopbackSettings, requested_schema, run_loopback
from ._model import Request
from ._registry import DEFAULT_SPEC
from ._scripted import ScriptedAPI
from ._types import Message, ModelError, ToolSpec
from ._weights import resolve_gguf

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ServedModel:
    """A running model server."""

    base_url: str
    """The OpenAI base URL, e.g. ``http://127.0.0.1:8080/v1``."""
    model: str
    """The model name the server answers to."""
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)
    """The server process (None when this object only describes a server)."""

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self.process is None or self.process.poll() is None

    @property
    def spec(self) -> str:
        """The spec string that reaches this server (with ``base_url`` as an option)."""
        return f"openai/{self.model}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_command(path: Path, *, model: str, port: int, n_ctx: int, n_threads: int) -> list[str]:
    """The command line that starts llama-cpp-python's server on 127.0.0.1."""
    return [
        *(sys.executable, "-m", "llama_cpp.server"),
        *("--model", str(path), "--model_alias", model),
        *("--host", HOST, "--port", str(port)),
        *("--n_ctx", str(n_ctx), "--n_threads", str(n_threads)),
        *("--n_threads_batch", str(n_threads)),
        # The server defaults to logits for every position: n_ctx x vocab floats (GBs).
        *("--logits_all", "false", "--verbose", "false"),
    ]


@contextlib.contextmanager
def serve_model(
    spec: str = DEFAULT_SPEC,
    port: int = 0,
    *,
    n_ctx: int = 8192,
    n_threads: int | None = None,
    startup_timeout_s: float = 180.0,
) -> Iterator[ServedModel]:
    """Run a ``llamacpp/...`` model as an OpenAI-compatible server for the block's duration
    (a ``scripted/...`` test double is served in-process, without weights or llama.cpp: a
    stand-in server for trying the OpenAI path).

    Args:
        spec: the model (``llamacpp/qwen2.5-coder-1.5b``, ``llamacpp/PATH.gguf``,
            ``scripted/auto``).
        port: the port; 0 picks a free one.
        n_ctx: context size in tokens.
        n_threads: CPU threads (default: `default_threads`, ``RAPPORT_THREADS`` or 2).
        startup_timeout_s: how long to wait for ``/v1/models`` to answer.

    Raises:
        ModelError: not a llamacpp spec, weights missing, or the server did not come up.
    """
    provider, _, rest = spec.partition("/")
    if provider == "scripted" and rest:
        with _serve_scripted(rest, port) as served:
            yield served
        return
    if provider != "llamacpp" or not rest:
        raise ModelError(f"serve_model takes a llamacpp/... or scripted/... spec, not '{spec}'")
    path = resolve_gguf(rest)
    model = Path(rest).stem if rest.endswith(".gguf") else rest
    port = port or free_port()
    command = server_command(
        path, model=model, port=port, n_ctx=n_ctx, n_threads=n_threads or default_threads()
    )
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            base_url = f"http://{HOST}:{port}/v1"
            _wait_until_ready(process, base_url, startup_timeout_s, log)
            yield ServedModel(base_url=base_url, model=model, port=port, process=process)
        finally:
            _stop(process)


def _wait_until_ready(
    process: subprocess.Popen[bytes], base_url: str, timeout_s: float, log: IO[bytes]
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ModelError(
                f"the model server exited with code {process.returncode}: {_tail(log)}"
            )
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise ModelError(f"the model server did not answer {base_url}/models within {timeout_s:.0f}s")


def _tail(log: IO[bytes], limit: int = 600) -> str:
    try:
        log.seek(0)
        text = log.read().decode(errors="replace")
    except OSError:
        return ""
    return " ".join(text.split())[-limit:]


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@contextlib.contextmanager
def _serve_scripted(rest: str, port: int) -> Iterator[ServedModel]:
    """A scripted double (``auto``, ``echo``, ``fixed:TEXT``) behind the loopback server."""
    api = ScriptedAPI.from_spec(rest)

    async def respond(body: dict[str, Any]) -> dict[str, Any]:
        completion = await api.complete(_request_of(body))
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in completion.tool_calls
            ]
        return message

    settings = LoopbackSettings(latency_s=0.0, idle_timeout_s=math.inf, model=rest)
    try:
        with run_loopback(settings, responder=respond, port=port) as server:
            yield ServedModel(base_url=server.base_url, model=rest, port=server.port)
    except OSError as exc:
        raise ModelError(f"cannot serve on {HOST}:{port}: {exc.strerror or exc}") from exc


def _request_of(body: dict[str, Any]) -> Request:
    """An OpenAI chat request body as the `Request` a provider gets."""
    messages = [
        Message(role=m.get("role", "user"), content=str(m.get("content") or ""))
        for m in body.get("messages", [])
        if m.get("role") in ("system", "user", "assistant", "tool")
    ]
    tools = [
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"].get("parameters", {}),
        )
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    return Request(
        messages=messages,
        json_schema=requested_schema(body.get("response_format")),
        tools=tools or None,
    )
