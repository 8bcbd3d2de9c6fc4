"""The `scripted` provider: a test double with scripted outputs or a callable."""

from __future__ import annotations

import asyncio
import difflib
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ._auto import auto_reply
from ._model import Completion, ModelAPI, Request, TextSink
from ._types import ModelError, ToolCall, Usage

Reply = str | Completion | ToolCall | list[ToolCall]
Responder = Callable[[Request], Reply | Awaitable[Reply]]


class ScriptedAPI(ModelAPI):
    """Replies from a list (in order) or from a callable of the request.

    Token usage is counted as whitespace-separated words, so accounting is testable.

    Args:
        replies: outputs returned one per call, in order; running out raises `ModelError`.
        responder: called with each `Request`; returns text, a `Completion` or tool calls.
        name: the spec string this double reports.
        stream_delay: seconds between the pieces of a streamed reply (each a word with the
            whitespace after it); 0 only yields to the event loop between them.
    """

    def __init__(
        self,
        replies: Iterable[Reply] | None = None,
        *,
        responder: Responder | None = None,
        name: str = "scripted/test",
        stream_delay: float = 0.0,
    ) -> None:
        if (replies is None) == (responder is None):
            raise ValueError("give exactly one of replies or responder")
        self.name = name
        self._replies = list(replies) if replies is not None else None
        self._responder = responder
        self.stream_delay = stream_delay
        self.requests: list[Request] = []

    @classmethod
    def from_spec(cls, rest: str, **_options: Any) -> ScriptedAPI:
        """``scripted/echo`` repeats the last user message; ``scripted/fixed:TEXT`` says TEXT;
        ``scripted/auto`` answers any request plausibly from a hash of it (`auto_reply`)."""
        if rest == "auto":
            return cls(responder=auto_reply, name="scripted/auto")
        if rest == "echo":
            return cls(responder=_echo, name="scripted/echo")
        if rest.startswith("fixed:"):
            text = rest.removeprefix("fixed:")
            return cls(responder=lambda _r: text, name=f"scripted/{rest}")
        near = difflib.get_close_matches(rest, ("auto", "echo"), n=1, cutoff=0.5)
        known = "known: scripted/auto, scripted/echo, scripted/fixed:TEXT"
        hint = f"did you mean scripted/{near[0]}?" if near else known
        raise ModelError(f"unknown scripted model 'scripted/{rest}' ({hint})")

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        if self._responder is not None:
            reply = self._responder(request)
            if inspect.isawaitable(reply):
                reply = await reply
        else:
            assert self._replies is not None
            if not self._replies:
                raise ModelError(f"{self.name}: no scripted replies left")
            reply = self._replies.pop(0)
        return _completion(reply, request)

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        """The scripted reply, its text handed over a word at a time."""
        completion = await self.complete(request)
        for i, piece in enumerate(_PIECE.findall(completion.text)):
            if i:
                await asyncio.sleep(self.stream_delay)
            on_text(piece)
        return completion


_PIECE = re.compile(r"\s*\S+\s*|\s+")
"""A word with the whitespace around it (leading whitespace only on the first)."""


def _echo(request: Request) -> str:
    users = [m.content for m in request.messages if m.role == "user"]
    return users[-1] if users else ""


def _completion(reply: Any, request: Request) -> Completion:
    if isinstance(reply, Completion):
        return reply
    prompt_words = sum(len(m.content.split()) for m in request.messages)
    if isinstance(reply, ToolCall):
        reply = [reply]
    if isinstance(reply, list):
        return Completion(tool_calls=reply, usage=Usage(prompt_tokens=prompt_words))
    text = str(reply)
    return Completion(
        text=text, usage=Usage(prompt_tokens=prompt_words, completion_tokens=len(text.split()))
    )
