"""The `Model` every component calls: provider + cache + accounting + structured output."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from rapport._errors import error_line
from rapport.log import ModelCall, ToolCall

from ._again import retry_messages
from ._sanitize import MAX_TOOL_CALLS, clean_text, clean_tool_call, redact_secrets
from ._types import (
    GenerateConfig,
    Message,
    ModelError,
    ModelOutput,
    OutputValidationError,
    ToolSpec,
    Usage,
)

TextSink = Callable[[str], None]
"""Takes a streamed reply's text, one piece at a time, on the event loop's thread."""


class Request(BaseModel):
    """A normalized provider request. Its JSON is the cache key (with the model name)."""

    messages: list[Message]
    json_schema: dict[str, Any] | None = None
    tools: list[ToolSpec] | None = None
    config: GenerateConfig = Field(default_factory=GenerateConfig)


class Completion(BaseModel):
    """What a provider returns for one request: raw text and/or tool calls."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    original_chars: int | None = None
    """Set when the provider's text was cut at the boundary: its length before."""


def sanitize_completion(completion: Completion) -> Completion:
    """The completion made safe to keep (see `rapport.llm._sanitize`); unchanged if it was."""
    text = clean_text(completion.text)
    calls = [clean_tool_call(c) for c in completion.tool_calls[:MAX_TOOL_CALLS]]
    if text == completion.text and calls == completion.tool_calls:
        return completion
    cut = len(completion.text) if len(text) < len(completion.text) else None
    return completion.model_copy(
        update={
            "text": text,
            "tool_calls": calls,
            "original_chars": completion.original_chars or cut,
        }
    )


class ModelAPI(ABC):
    """A provider. `name` is its canonical spec string (``llamacpp/qwen2.5-coder-1.5b``).

    `complete` is the one required method; the rest are hooks with no-op defaults that a
    provider overrides where it has the thing: an endpoint (`base_url`), local weights
    (`path`), a readiness check, a use for the run's concurrency, a tokenizer.
    """

    name: str
    base_url: str = ""
    """The endpoint the provider calls, credentials taken out ("" for none); part of the
    cache key."""
    path: Path | None = None
    """The local weights it loads (None for none); their fingerprint is part of the cache key."""

    @abstractmethod
    async def complete(self, request: Request) -> Completion:
        """One completion."""

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        """One completion, its text handed to `on_text` in pieces as it is generated.

        The default hands over the whole text once, when it is complete, so every provider
        can be streamed; a provider that generates piece by piece overrides it.
        """
        completion = await self.complete(request)
        if completion.text:
            on_text(completion.text)
        return completion

    def check_ready(self) -> None:  # noqa: B027 (optional hook)
        """Fail early, before a run writes anything, when the provider cannot serve.

        Raises:
            ModelError: one line saying why.
        """

    def set_concurrency(self, concurrency: int) -> None:  # noqa: B027 (optional hook)
        """Told how many users a run plays at once (a local engine sizes its batch by it)."""

    def count_tokens(self, text: str) -> int | None:
        """Tokens of `text` in the model's own tokenizer; None where the provider has none
        (callers then estimate, and say so)."""
        return None


class ResponseCache(Protocol):
    """Maps a request key to a stored completion."""

    def get(self, key: str) -> Completion | None: ...

    def put(self, key: str, completion: Completion) -> None: ...


class InMemoryCache:
    """A dict-backed `ResponseCache` (tests, throwaway runs)."""

    def __init__(self) -> None:
        self._items: dict[str, str] = {}

    def get(self, key: str) -> Completion | None:
        raw = self._items.get(key)
        return Completion.model_validate_json(raw) if raw is not None else None

    def put(self, key: str, completion: Completion) -> None:
        self._items[key] = completion.model_dump_json()


_CALLS: contextvars.ContextVar[list[ModelCall] | None] = contextvars.ContextVar(
    "rapport_model_calls", default=None
)


@contextlib.contextmanager
def record_calls() -> Iterator[list[ModelCall]]:
    """Collect the `ModelCall` of every `generate` made inside this block (this task only).

    Nested blocks each see the calls made while they are open.
    """
    outer = _CALLS.get()
    calls: list[ModelCall] = []
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)
        if outer is not None:
            outer.extend(calls)


def stable_hash(*parts: str) -> str:
    """A hex digest of the parts, stable across processes (unlike `hash`)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


@functools.cache
def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, built once per class (callers must not mutate it).

    Building it takes about a millisecond for a small model; a structured call asked every
    turn by hundreds of users would spend more CPU here than on the call itself.
    """
    return schema.model_json_schema()


def derive_seed(run_seed: int, key: str) -> int:
    """A 31-bit sampling seed from the run seed and a stable call key."""
    return int(stable_hash(str(run_seed), key)[:8], 16) & 0x7FFFFFFF


def parse_json_output(text: str) -> Any:
    """Parse a model's JSON, tolerating raw newlines in strings and a fenced block around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=0)
    try:
        return json.loads(body[start:], strict=False)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


class Model:
    """A provider wrapped with the response cache, usage accounting and schema validation.

    Args:
        api: the provider.
        role: the role this model plays (``agent``, ``user``, ``judge``, ``memory`` ...).
        cache: where completions are kept; ``None`` disables caching.
        run_seed: the run's seed; sampling seeds derive from it and the request.
        sampling: the role's sampling defaults (`GenerateConfig` fields: ``temperature``,
            ``top_p``, ``max_tokens``, ``seed``), used where a call's config does not set them.
    """

    def __init__(
        self,
        api: ModelAPI,
        *,
        role: str = "agent",
        cache: ResponseCache | None = None,
        run_seed: int = 0,
        sampling: Mapping[str, Any] | None = None,
    ) -> None:
        self.api = api
        self.role = role
        self.cache = cache
        self.run_seed = run_seed
        self.sampling = dict(sampling or {})
        unknown = set(self.sampling) - set(GenerateConfig.model_fields)
        if unknown:
            raise ModelError(f"unknown sampling settings: {', '.join(sorted(unknown))}")
        self._identity: str | None = None

    @property
    def name(self) -> str:
        return self.api.name

    def count_tokens(self, text: str) -> int | None:
        """Tokens of `text` in the provider's tokenizer (None: it has none; see
        `ModelAPI.count_tokens`)."""
        return self.api.count_tokens(text)

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        tools: list[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
        on_text: TextSink | None = None,
    ) -> ModelOutput:
        """Generate a reply; with `schema`, the reply is parsed and validated into it.

        With `on_text`, the reply's text is also handed to it in pieces while it is
        generated (leading whitespace left out); a cached reply comes as one piece. The
        returned output holds the whole text as always.

        Raises:
            ValueError: `on_text` with a `schema` (structured output is never streamed).
            OutputValidationError: the output stayed invalid after `config.max_retries`.
            ModelError: the provider failed.
        """
        if on_text is not None and schema is not None:
            raise ValueError("structured output is not streamed: give on_text or schema")
        config = with_defaults(config, self.sampling)
        json_schema = json_schema_of(schema) if schema is not None else None
        if config.seed is None:
            key = Request(messages=messages, json_schema=json_schema, tools=tools).model_dump_json()
            config = config.model_copy(update={"seed": derive_seed(self.run_seed, key)})
        convo = list(messages)
        usage, latency, all_cached = Usage(), 0.0, True
        error = ""
        cut: int | None = None
        for _attempt in range(config.max_retries + 1):
            request = Request(messages=convo, json_schema=json_schema, tools=tools, config=config)
            started = time.perf_counter()
            try:
                completion, cached = await self._complete(request, on_text)
            except ModelError as exc:
                # A failed call is a failure, never a cache hit.
                self._account(usage, latency, False, error=f"{type(exc).__name__}: {exc}")
                exc.role = exc.role or self.role
                raise
            except Exception as exc:
                # A provider that broke its contract: still the role's failure, typed.
                failure = ModelError(f"{type(exc).__name__}: {clean_text(str(exc), 500)}")
                self._account(usage, latency, False, error=str(failure))
                failure.role = self.role
                raise failure from exc
            latency += time.perf_counter() - started
            usage = usage + completion.usage
            all_cached = all_cached and cached
            cut = completion.original_chars or cut
            if schema is None:
                self._account(usage, latency, all_cached, cut=cut)
                return self._output(completion, None, usage, latency, all_cached)
            try:
                parsed = schema.model_validate(parse_json_output(completion.text))
            except (ValueError, ValidationError, RecursionError) as exc:
                error = error_line(exc, limit=300)
                convo = retry_messages(
                    convo,
                    completion.text,
                    f"That output is invalid: {error}\n"
                    "Reply again with only a JSON object that fits the schema.",
                )
                continue
            self._account(usage, latency, all_cached, cut=cut)
            return self._output(completion, parsed, usage, latency, all_cached)
        self._account(usage, latency, all_cached, error=f"OutputValidationError: {error}", cut=cut)
        failure = OutputValidationError(
            f"{self.name} gave no valid {schema.__name__ if schema else 'output'} after "
            f"{config.max_retries + 1} attempts: {error}",
            raw=convo[-2].content if len(convo) >= 2 else "",
        )
        failure.role = self.role
        raise failure

    @property
    def cache_identity(self) -> str:
        """What besides the name tells this provider's answers apart: its endpoint and its
        weights' fingerprint (path, size, modification time), so a retrained checkpoint at
        the same path, or another server under the same model name, misses old entries."""
        if self._identity is None:
            self._identity = cache_identity(self.api)
        return self._identity

    async def _complete(
        self, request: Request, on_text: TextSink | None = None
    ) -> tuple[Completion, bool]:
        if self.cache is None:
            # No key to build: serializing and hashing the request is a good part of the
            # harness's CPU per call with hundreds of users in flight.
            return sanitize_completion(await self._call(request, on_text)), False
        identity = self.cache_identity
        parts = (self.api.name, identity) if identity else (self.api.name,)
        key = stable_hash(*parts, request.model_dump_json())
        hit = self.cache.get(key)
        if hit is not None:
            if on_text is not None and hit.text:
                on_text(hit.text)
            return hit, True
        completion = sanitize_completion(await self._call(request, on_text))
        self.cache.put(key, completion)
        return completion, False

    async def _call(self, request: Request, on_text: TextSink | None) -> Completion:
        if on_text is None:
            return await self.api.complete(request)
        return await self.api.stream(request, _Pieces(on_text))

    def _output(
        self, completion: Completion, parsed: Any, usage: Usage, latency: float, cached: bool
    ) -> ModelOutput:
        return ModelOutput(
            text=completion.text,
            parsed=parsed,
            tool_calls=completion.tool_calls,
            usage=usage,
            latency_s=latency,
            cached=cached,
            model=self.name,
        )

    def _account(
        self,
        usage: Usage,
        latency: float,
        cached: bool,
        *,
        error: str | None = None,
        cut: int | None = None,
    ) -> None:
        sink = _CALLS.get()
        if sink is None:
            return
        if error is not None:
            error = redact_secrets(clean_text(error, 2_000))
        sink.append(
            ModelCall(
                role=self.role,
                model=self.name,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                latency_s=latency,
                cached=cached,
                error=error,
                original_chars=cut,
            )
        )


class _Pieces:
    """A provider's streamed pieces made safe to show: invalid code points replaced, the
    reply's leading whitespace left out of what is shown."""

    def __init__(self, sink: TextSink) -> None:
        self.sink = sink
        self.started = False

    def __call__(self, piece: str) -> None:
        if not self.started:
            piece = piece.lstrip()
            self.started = bool(piece)
        if piece:
            self.sink(clean_text(piece))


def with_defaults(config: GenerateConfig | None, defaults: Mapping[str, Any]) -> GenerateConfig:
    """A call's config with the defaults filled in where the caller did not set a field."""
    if config is None:
        return GenerateConfig(**defaults)
    unset = {k: v for k, v in defaults.items() if k not in config.model_fields_set}
    return config.model_copy(update=unset) if unset else config


def cache_identity(api: ModelAPI) -> str:
    """A provider's endpoint and weights fingerprint ("" for providers with neither)."""
    parts: list[str] = []
    if api.base_url:
        parts.append(redact_secrets(api.base_url))
    if api.path is not None and Path(api.path).expanduser().exists():
        parts.append(weights_fingerprint(Path(api.path).expanduser()))
    return "|".join(parts)


def weights_fingerprint(path: Path) -> str:
    """A weights file's path, size and modification time; for a checkpoint directory, those
    of every file in it (``save_pretrained`` rewrites files in place, which leaves the
    directory's own modification time as it was)."""
    if not path.is_dir():
        stat = path.stat()
        return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    stamps = []
    for file in sorted(p for p in path.iterdir() if p.is_file()):
        stat = file.stat()
        stamps.append(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return f"{path.resolve()}:" + ",".join(stamps)
