"""A loopback OpenAI-compatible upstream for proxy tests: it keeps every request it gets and
answers with a reply that names the notes it was shown, whole or streamed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


def reply_to(messages: list[dict[str, Any]]) -> str:
    """The stand-in model's answer: in bullets when its prompt holds a note asking for them."""
    prompt = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    if "bullet" in prompt.lower():
        return "- first point\n- second point"
    return "A plain paragraph answer."


def upstream_app(seen: list[dict[str, Any]]) -> FastAPI:
    """The upstream: records each request body in `seen`."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        seen.append(body)
        text = reply_to(body["messages"])
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            return JSONResponse(
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "model": "m",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
            )

        async def events() -> AsyncIterator[bytes]:
            for word in text.split(" "):
                chunk = {"choices": [{"index": 0, "delta": {"content": word + " "}}]}
                yield f"data: {json.dumps(chunk)}\n\n".encode()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app
