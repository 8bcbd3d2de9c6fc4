"""The ``openai`` provider: any OpenAI-compatible chat server through the `openai` SDK.

Works for OpenAI, vLLM, SGLang, Ollama and llama.cpp's servers. The key comes from the
options or ``OPENAI_API_KEY`` and is handed only to the SDK: never logged, never stored.
"""

from __future__ import annotations

import logging
import os
import re
from types import SimpleNamespace
from typing import Any, Literal, cast

from ._chat import chat_messages, parse_arguments, tool_call_id, tools_payload
from ._http import HTTPStatusError, JSONClient
from ._llamacpp import spell_out_patterns
from ._model import Completion, ModelAPI, Request, TextSink
from ._sanitize import redact_secrets
from ._types import ContextFull, ModelError, ToolCall, Usage

log = logging.getLogger(__name__)

SchemaMode = Literal["json_schema", "json_object"]
_OPTIONS = {
    "base_url",
    "api_key",
    "schema_mode",
    "timeout",
    "max_retries",
    "http_client",
    "transport",
}
Transport = Literal["sdk", "direct"]

READY_TIMEOUT_S = 5.0
"""Seconds `OpenAIAPI.check_ready` waits for the server (at most the provider's timeout)."""


class OpenAIAPI(ModelAPI):
    """A chat model behind an OpenAI-compatible endpoint. A reply's text is kept as the server
    wrote it, edge whitespace included (MSC's runner keeps it so).

    Args:
        model: the server's model name.
        base_url: the endpoint (default ``OPENAI_BASE_URL``, else OpenAI's).
        api_key: the key (default ``OPENAI_API_KEY``; local servers need none).
        schema_mode: how structured output is asked for: ``json_schema`` (OpenAI, vLLM,
            SGLang) or ``json_object`` with the schema inline (llama.cpp's servers). A server
            that rejects ``json_schema`` is retried with ``json_object``, once per provider.
        timeout: seconds per request.
        max_retries: SDK retries on connection errors and rate limits.
        http_client: an `httpx.AsyncClient` to send requests with (proxies, tests).
        transport: ``sdk`` sends through the `openai` SDK; ``direct`` through rapport's lean
            HTTP/1.1 client (`JSONClient`): about a tenth of the CPU per call, for hundreds
            of users in flight against a local server. ``direct`` does not retry. Default:
            ``RAPPORT_OPENAI_TRANSPORT``, else ``sdk``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        schema_mode: SchemaMode = "json_schema",
        timeout: float = 600.0,
        max_retries: int = 2,
        http_client: Any = None,
        transport: Transport | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ModelError(
                "the openai provider needs the openai SDK: pip install openai"
            ) from exc
        if schema_mode not in ("json_schema", "json_object"):
            raise ModelError(f"schema_mode must be json_schema or json_object, not {schema_mode!r}")
        self.name = f"openai/{model}"
        self.model = model
        self.schema_mode: SchemaMode = schema_mode
        chosen = transport or os.environ.get("RAPPORT_OPENAI_TRANSPORT") or "sdk"
        if chosen not in ("sdk", "direct"):
            raise ModelError(f"transport must be sdk or direct, not {chosen!r}")
        self.transport = cast(Transport, chosen)
        self.timeout = timeout
        self._own_http = http_client is None
        self._client = openai.AsyncOpenAI(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        self.base_url = redact_secrets(str(self._client.base_url))
        """The endpoint requests go to, without any credentials it carries."""
        self._direct: JSONClient | None = None
        if self.transport == "direct":
            key = api_key or os.environ.get("OPENAI_API_KEY")
            self._direct = JSONClient(
                str(self._client.base_url),
                headers={"Authorization": f"Bearer {key}"} if key else None,
                timeout=timeout,
            )

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> OpenAIAPI:
        """``openai/MODEL``; options as in the constructor.

        Raises:
            ModelError: unknown options or the SDK is missing.
        """
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ModelError(f"unknown openai options: {', '.join(sorted(unknown))}")
        return cls(rest, **options)

    def check_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Ask the server for its models (``GET /models``): any answer but a refused key
        means it is there. Skipped when the provider was given its own ``http_client``.

        Raises:
            ModelError: no answer within `timeout` seconds (or the provider's own timeout,
                if shorter), or the server refused the key (HTTP 401 or 403).
        """
        if not self._own_http:
            return
        import httpx

        url = str(self._client.base_url).rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {self._client.api_key}"}
        wait = min(timeout, self.timeout)
        where = self.base_url.rstrip("/")
        try:
            with httpx.Client(timeout=wait) as client:
                status = client.get(url, headers=headers).status_code
        except httpx.TimeoutException as exc:
            raise ModelError(f"cannot reach {where}: no answer in {wait:g} s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = redact_secrets(str(exc) or type(exc).__name__)[:300]
            raise ModelError(f"cannot reach {where}: {reason}") from exc
        if status in (401, 403):
            raise ModelError(f"{where} refused the API key (HTTP {status} on GET /models)")

    async def complete(self, request: Request) -> Completion:
        """Send one chat completion request.

        Raises:
            ContextFull: the server says the prompt does not fit the model's context.
            ModelError: any other SDK or server failure, or an empty reply.
        """
        import openai

        try:
            try:
                response = await self._create(request)
            except (openai.APIStatusError, HTTPStatusError) as exc:
                if not self._rejects_json_schema(request, exc):
                    raise
                log.info("%s rejected json_schema output (%s); using json_object", self.name, exc)
                self.schema_mode = "json_object"
                response = await self._create(request)
        except (openai.OpenAIError, HTTPStatusError, OSError, TimeoutError) as exc:
            kind = ContextFull if _context_full(exc) else ModelError
            raise kind(f"{self.name} at {self.base_url}: {_describe(exc)}") from exc
        return _completion(response, self.name)

    def _rejects_json_schema(self, request: Request, exc: Exception) -> bool:
        """Whether an error says the server does not take ``json_schema`` output.

        llama-cpp-python's server answers such a request with a 500 naming the field.
        """
        if request.json_schema is None or self.schema_mode != "json_schema":
            return False
        status = getattr(exc, "status_code", 0)
        return status in (400, 422) or (status == 500 and "response_format" in str(exc))

    async def _create(self, request: Request) -> Any:
        kwargs, body = self._payload(request)
        if self._direct is not None:
            # Attribute access on the reply, as on the SDK's models (`_completion` reads both).
            payload = {**kwargs, **body}
            return await self._direct.post("/chat/completions", payload, object_hook=_namespace)
        return await self._client.chat.completions.create(messages=[], extra_body=body, **kwargs)

    def _payload(self, request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        """The request's flat settings and its nested parts (messages, tools, format)."""
        config = request.config
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
        }
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.stop:
            kwargs["stop"] = list(config.stop)
        # The nested parts go in `extra_body`: the SDK sends it as is, where it would walk
        # `messages`, `tools` and the schema key by key against its type hints (most of the
        # harness's CPU per call with hundreds of users in flight).
        body: dict[str, Any] = {"messages": chat_messages(request.messages, arguments_as_json=True)}
        if request.tools:
            body["tools"] = tools_payload(request.tools)
        if request.json_schema is not None:
            body["response_format"] = self._response_format(request.json_schema)
        return kwargs, body

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        """Send one chat completion request with ``stream=True``; each piece of text goes
        to `on_text` as the server sends it. A request with tools or a schema, or on the
        ``direct`` transport, is sent whole (its text handed over once).

        Raises:
            ContextFull: the server says the prompt does not fit the model's context.
            ModelError: any other SDK or server failure, or an empty reply.
        """
        if request.tools or request.json_schema is not None or self._direct is not None:
            return await super().stream(request, on_text)
        import openai

        kwargs, body = self._payload(request)
        pieces: list[str] = []
        usage: Any = None
        try:
            chunks = await self._client.chat.completions.create(
                messages=[],
                extra_body=body,
                stream=True,
                stream_options={"include_usage": True},
                **kwargs,
            )
            async for chunk in chunks:
                usage = getattr(chunk, "usage", None) or usage
                for choice in chunk.choices or []:
                    piece = getattr(choice.delta, "content", None) or ""
                    if piece:
                        pieces.append(piece)
                        on_text(piece)
        except (openai.OpenAIError, OSError, TimeoutError) as exc:
            kind = ContextFull if _context_full(exc) else ModelError
            raise kind(f"{self.name} at {self.base_url}: {_describe(exc)}") from exc
        return Completion(
            text="".join(pieces),
            usage=Usage(
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            ),
        )

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.schema_mode == "json_object":
            # llama.cpp's servers build a grammar from the schema; `\d` in a pattern kills
            # llama-cpp-python's server process, so classes are spelled out as for llamacpp.
            return {"type": "json_object", "schema": spell_out_patterns(schema)}
        name = "".join(c for c in str(schema.get("title", "output")) if c.isalnum() or c in "_-")
        return {
            "type": "json_schema",
            "json_schema": {"name": name or "output", "schema": schema, "strict": False},
        }


def _namespace(fields: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(**fields)


# How servers word a prompt past the context: OpenAI's `context_length_exceeded`, vLLM's
# "maximum context length", llama.cpp's `exceed_context_size_error`.
_CONTEXT_FULL = re.compile(r"context.(?:length|size|window)|exceed_context", re.IGNORECASE)


def _context_full(exc: Exception) -> bool:
    """Whether a refused request was refused for a prompt longer than the context."""
    status = getattr(exc, "status_code", None)
    return status in (400, 413) and _CONTEXT_FULL.search(str(exc)) is not None


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc)
    head = type(exc).__name__ + (f" {status}" if status else "")
    return redact_secrets(f"{head}: {message}")[:500]


def _completion(response: Any, name: str) -> Completion:
    if not getattr(response, "choices", None):
        raise ModelError(f"{name} returned no choices")
    message = response.choices[0].message
    text = getattr(message, "content", None) or ""
    calls: list[ToolCall] = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        if function is None:
            continue
        arguments = parse_arguments(function.arguments)
        if arguments is None:
            # Not a JSON object: keep what the model wrote where the caller can see it.
            text += f"\n<tool_call>{function.name}: {function.arguments}</tool_call>"
            continue
        call_id = getattr(call, "id", None) or tool_call_id(function.name, arguments, len(calls))
        calls.append(ToolCall(id=call_id, name=function.name, arguments=arguments))
    usage = response.usage
    return Completion(
        text=text,
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
    )
