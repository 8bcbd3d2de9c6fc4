"""kill -9 of the service while it learns, or while it streams a proxied reply: nothing it
acknowledged is lost, and nothing is learned twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from rapport.service._serve import running

KEY = {"Authorization": "Bearer rk-test"}
NOTE = "The user wants bullet points."


class Model:
    """A loopback model endpoint. Its replies are held until the test lets them go (while
    `hold` is set); a streamed reply always stops after its first chunk until then."""

    def __init__(self) -> None:
        self.hold = True
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.chat)

    async def chat(self, request: Request) -> Any:
        import asyncio

        body = await request.json()
        self.calls += 1
        self.arrived.set()
        if self.hold:
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 60)
        if body.get("stream"):

            async def events() -> Any:
                yield b'data: {"choices":[{"index":0,"delta":{"content":"- one"}}]}\n\n'
                await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 60)
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        message = {"role": "assistant", "content": json.dumps({"notes": NOTE})}
        return {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "created": 0,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture
def model() -> Iterator[tuple[Model, str]]:
    held = Model()
    with running(held.app) as url:
        yield held, f"{url}/v1"
        held.release.set()


def _serve(
    db: Path, base_url: str, upstream: str | None = None
) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x"}
    cmd = [
        sys.executable,
        "-m",
        "rapport",
        "serve-memory",
        "--db",
        str(db),
        "--port",
        "0",
        "--memory",
        "reflection",
        "--memory-option",
        "form=msc",
        "--model",
        "memory=openai/m",
        "--rate",
        "0",
    ]
    if upstream:
        cmd += ["--upstream", upstream]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "serving memory" in line, line
    return proc, line.split(" at ")[1].split(" ")[0]


def _tenant(db: Path) -> None:
    from rapport.store import ServiceStore

    store = ServiceStore(db)
    store.add_tenant("lab")
    store.add_key("lab", "rk-test")


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)


def test_a_job_killed_while_learning_is_learned_once_after_a_restart(
    tmp_path: Path, model: tuple[Model, str]
) -> None:
    held, base = model
    db = tmp_path / "m.sqlite"
    _tenant(db)
    proc, url = _serve(db, base)
    try:
        said = {"messages": [{"role": "user", "content": "Bullet points, please."}]}
        job = httpx.post(
            f"{url}/v1/users/ada/conversations", json=said, headers=KEY, timeout=60
        ).json()
        assert held.arrived.wait(60)  # the service is inside the memory's model call
    finally:
        _kill(proc)
    held.release.set()
    proc, url = _serve(db, base)
    try:
        # The dead worker's lease has to run out before another takes its job.
        from rapport.store import ServiceStore

        store = ServiceStore(db)
        store._db().execute("UPDATE jobs SET lease_until = 0")
        done = httpx.get(
            f"{url}/v1/jobs/{job['job']}", params={"wait": 60}, headers=KEY, timeout=70
        ).json()
        assert (done["status"], done["version"]) == ("done", 1), done
        user = httpx.get(f"{url}/v1/users/ada", headers=KEY, timeout=60).json()
        assert [v["version"] for v in user["versions"]] == [1]
        assert NOTE in str(user["state"])
    finally:
        _kill(proc)


def test_a_proxied_stream_killed_midway_keeps_the_conversation_acknowledged_before(
    tmp_path: Path, model: tuple[Model, str]
) -> None:
    held, base = model
    db = tmp_path / "m.sqlite"
    _tenant(db)
    held.hold = False
    proc, url = _serve(db, base, upstream=base)
    chat = f"{url}/v1/chat/completions"
    first = [{"role": "user", "content": "Bullet points, please."}]
    try:
        reply = httpx.post(
            chat, json={"model": "m", "messages": first, "user": "ada"}, headers=KEY, timeout=120
        )
        conversation = reply.headers["x-rapport-conversation"]
        second = [
            *first,
            {"role": "assistant", "content": NOTE},
            {"role": "user", "content": "More?"},
        ]
        body = {"model": "m", "messages": second, "user": "ada", "stream": True}
        with httpx.stream("POST", chat, json=body, headers=KEY) as streamed:
            lines = streamed.iter_lines()
            assert "- one" in next(line for line in lines if line.startswith("data:"))
            _kill(proc)
    finally:
        if proc.poll() is None:
            _kill(proc)
    held.release.set()
    proc, url = _serve(db, base)
    try:
        ended = httpx.post(f"{url}/v1/conversations/{conversation}/end", headers=KEY, timeout=60)
        assert ended.status_code == 202
        done = httpx.get(
            f"{url}/v1/jobs/{ended.json()['job']}", params={"wait": 60}, headers=KEY, timeout=70
        ).json()
        assert (done["status"], done["version"]) == ("done", 1)
    finally:
        _kill(proc)
