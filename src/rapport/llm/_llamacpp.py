"""The ``llamacpp`` provider: GGUF models run in-process by llama-cpp-python.

One `llama_cpp.Llama` per model file per process, shared by every role and instance. All
llama.cpp work runs on one dedicated worker thread, so calls are serialized (two decodes on
two cores run far slower than one after the other) and the event loop stays free.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._chat import chat_messages, parse_tool_calls, tools_payload
from ._model import Completion, Request
from ._prefix_cache import PrefixStateCache
from ._types import GenerateConfig, ModelError, Usage
from ._weights import resolve_gguf

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'rapport[llamacpp]'  (llama-cpp-python, compiled by pip)"

# One worker for all llama.cpp work in the process: loads and decodes never overlap.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rapport-llamacpp")
_ENGINES: dict[Path, LlamaEngine] = {}
_ENGINES_LOCK = threading.Lock()


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(f"the llamacpp provider needs llama-cpp-python: {INSTALL_HINT}") from exc
    return llama_cpp


class LlamaEngine:
    """A loaded GGUF model with its chat formatter, grammar cache and saved contexts.

    Args:
        path: the GGUF file.
        n_ctx: context size in tokens.
        n_threads: CPU threads for decoding and prompt evaluation.
        prefix_cache_mb: memory for saved contexts (see `PrefixStateCache`); 0 disables.
    """

    def __init__(self, path: Path, *, n_ctx: int, n_threads: int, prefix_cache_mb: int) -> None:
        llama_cpp = _import_llama_cpp()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        try:
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp cannot load {path}: {exc}; if it is an embedded model, "
                "run `rapport models verify`"
            ) from exc
        self.path = path
        self.lock = threading.Lock()
        self.prefix_cache = PrefixStateCache(prefix_cache_mb << 20)
        self._grammars: dict[str, Any] = {}
        template = self.llm.metadata.get("tokenizer.chat_template") or _CHATML
        eos = self.llm.detokenize([self.llm.token_eos()], special=True).decode(errors="ignore")
        self.eos_token = eos
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token="")

    @property
    def n_ctx(self) -> int:
        """The context size in tokens."""
        return int(self.llm.n_ctx())

    def render(self, request: Request) -> str:
        """The prompt text: the conversation (and tools) through the model's chat template."""
        tools = tools_payload(request.tools) if request.tools else None
        messages = chat_messages(request.messages, arguments_as_json=False)
        try:
            rendered = self._formatter(messages=messages, tools=tools)  # type: ignore[arg-type]
        except Exception as exc:  # the template may raise on a conversation it cannot render
            raise ModelError(f"the chat template of {self.path.name} failed: {exc}") from exc
        return str(rendered.prompt)

    def tokenize(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt (special tokens parsed)."""
        return list(self.llm.tokenize(prompt.encode(), add_bos=False, special=True))

    def grammar(self, schema: dict[str, Any]) -> Any:
        """The GBNF grammar for a JSON schema (cached by the schema's hash); None if unsupported.

        Regex classes in ``pattern`` (``\\d``, ``\\w``, ``\\s``) are spelled out first: the
        converter copies them as literal escapes, which llama.cpp's grammar parser refuses.
        If llama.cpp still refuses the grammar, patterns are dropped (the output is
        validated against the full schema afterwards either way).
        """
        key = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
        if key not in self._grammars:
            grammar = self._parsed_grammar(spell_out_patterns(schema))
            if grammar is None:
                grammar = self._parsed_grammar(drop_patterns(schema))
            if grammar is None:
                log.warning("no grammar for this schema; decoding unconstrained")
            self._grammars[key] = grammar
        return self._grammars[key]

    def _parsed_grammar(self, schema: dict[str, Any]) -> Any:
        """The schema's grammar if llama.cpp parses it, else None."""
        import llama_cpp
        from llama_cpp import LlamaGrammar

        try:
            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception:  # the converter raises bare exceptions on odd schemas
            return None
        sampler = grammar_sampler(self.llm, grammar)
        if sampler is None:
            return None
        llama_cpp.llama_sampler_free(sampler)
        return grammar

    def complete(self, request: Request) -> Completion:
        """Run one request to completion (blocking; call it on the worker thread)."""
        tokens = self.tokenize(self.render(request))
        room = self.n_ctx - len(tokens)
        if room <= 0:
            raise ModelError(
                f"the prompt has {len(tokens)} tokens, more than the context of {self.n_ctx} "
                f"of {self.path.name}; shorten it or raise n_ctx"
            )
        config = request.config
        grammar = self.grammar(request.json_schema) if request.json_schema is not None else None
        with self.lock:
            try:
                self.prefix_cache.prefill(self.llm, tokens)
                out = self._decode(tokens, config, grammar, max_tokens=min(config.max_tokens, room))
            except (ValueError, RuntimeError) as exc:
                self.llm.reset()
                self.prefix_cache.reset()
                raise ModelError(f"llama.cpp failed on {self.path.name}: {exc}") from exc
            self.prefix_cache.save(self.llm)
        text = self._text(out, config.stop)
        usage = Usage(prompt_tokens=len(tokens), completion_tokens=len(out))
        if request.tools:
            text, calls = parse_tool_calls(text, [t.name for t in request.tools])
            return Completion(text=text, tool_calls=calls, usage=usage)
        return Completion(text=text.strip(), usage=usage)

    def _decode(
        self, prompt: list[int], config: GenerateConfig, grammar: Any, *, max_tokens: int
    ) -> list[int]:
        """Sample completion tokens until end of turn, a stop string or `max_tokens`.

        The grammar is applied lazily, as llama.cpp's own server does: a token is first drawn
        from the unconstrained distribution and checked against the grammar alone; only when
        the grammar rejects it are all 151k candidates masked and the token drawn again.
        Most tokens of a JSON answer are accepted at once, so the full mask (tens of ms per
        token on Qwen's vocabulary) is rarely paid.
        """
        llm = self.llm
        llm.eval(prompt[llm.n_tokens :])
        with _Sampler(llm, config, grammar) as sampler:
            out: list[int] = []
            while len(out) < max_tokens:
                token = sampler.sample()
                if self._is_end(token):
                    break
                out.append(token)
                if self._hit_stop(out, config.stop) or len(out) >= max_tokens:
                    break
                llm.eval([token])
        return out

    def _is_end(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))

    def _hit_stop(self, out: list[int], stop: tuple[str, ...]) -> bool:
        return bool(stop) and any(s in self._text(out, ()) for s in stop)

    def _text(self, out: list[int], stop: tuple[str, ...]) -> str:
        """Completion text with special tokens kept (``<tool_call>`` is one), cut at a stop."""
        raw = self.llm.detokenize(out, special=True)
        text = raw.decode("utf-8", errors="ignore")
        for s in stop:
            text = text.split(s, 1)[0]
        return text


def grammar_sampler(llm: Any, grammar: Any) -> Any:
    """A llama.cpp grammar sampler for `grammar` (free it after use); None if refused."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(
        llm._model.vocab, grammar._grammar.encode(), grammar._root.encode()
    )
    return sampler or None


class _Sampler:
    """Token sampling over the live context's last logits, with a lazily applied grammar.

    The chain is greedy at temperature 0, else top-p, temperature and a seeded draw. It is
    freed on exit (llama.cpp samplers are C objects).
    """

    def __init__(self, llm: Any, config: GenerateConfig, grammar: Any) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._llm = llm
        self._n_vocab = int(llm.n_vocab())
        params = llama_cpp.llama_sampler_chain_default_params()
        self._chain = llama_cpp.llama_sampler_chain_init(params)
        add = llama_cpp.llama_sampler_chain_add
        if config.temperature <= 0.0:
            add(self._chain, llama_cpp.llama_sampler_init_greedy())
        else:
            if config.top_p < 1.0:
                add(self._chain, llama_cpp.llama_sampler_init_top_p(config.top_p, 1))
            add(self._chain, llama_cpp.llama_sampler_init_temp(config.temperature))
            seed = config.seed if config.seed is not None else llama_cpp.LLAMA_DEFAULT_SEED
            add(self._chain, llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        self._grammar = grammar_sampler(llm, grammar) if grammar is not None else None
        dtype = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        self._all = np.zeros(self._n_vocab, dtype=dtype)
        self._ids = np.arange(self._n_vocab, dtype=np.intc)
        self._one = np.zeros(1, dtype=dtype)
        self.rejections = 0
        """Tokens the grammar refused, each followed by a fully masked draw."""

    def __enter__(self) -> _Sampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self._lib.llama_sampler_free(self._chain)
        if self._grammar is not None:
            self._lib.llama_sampler_free(self._grammar)

    def _array(self, data: Any) -> Any:
        lib = self._lib
        return lib.llama_token_data_array(
            data=data.ctypes.data_as(lib.llama_token_data_p),
            size=len(data),
            selected=-1,
            sorted=False,
        )

    def _draw(self, logits: Any, *, masked: bool) -> int:
        """Apply (the grammar and) the chain to all candidates; the selected token."""
        import ctypes

        self._all["id"] = self._ids  # the chain sorts the array in place
        self._all["logit"] = logits
        self._all["p"] = 0.0
        array = self._array(self._all)
        if masked:
            self._lib.llama_sampler_apply(self._grammar, ctypes.byref(array))
        self._lib.llama_sampler_apply(self._chain, ctypes.byref(array))
        return int(self._all["id"][array.selected])

    def _allowed(self, token: int) -> bool:
        import ctypes
        import math

        self._one["id"] = token
        self._one["logit"] = 0.0
        array = self._array(self._one)
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(array))
        return not math.isinf(float(self._one["logit"][0]))

    def sample(self) -> int:
        """The next token (accepted by the grammar, which is advanced past it)."""
        import numpy as np

        pointer = self._lib.llama_get_logits_ith(self._llm.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = self._draw(logits, masked=False)
        if self._grammar is not None:
            if not self._allowed(token):
                self.rejections += 1
                token = self._draw(logits, masked=True)
            self._lib.llama_sampler_accept(self._grammar, token)
        self._lib.llama_sampler_accept(self._chain, token)
        return token


_REGEX_CLASSES = {r"\d": "[0-9]", r"\w": "[A-Za-z0-9_]", r"\s": "[ \t\n]"}


def spell_out_patterns(schema: Any) -> Any:
    """A copy of a JSON schema whose ``pattern`` strings use bracket classes, not escapes."""
    if isinstance(schema, dict):
        out = {}
        for name, value in schema.items():
            if name == "pattern" and isinstance(value, str):
                for escape, spelled in _REGEX_CLASSES.items():
                    value = value.replace(escape, spelled)
            out[name] = value if isinstance(value, str) else spell_out_patterns(value)
        return out
    if isinstance(schema, list):
        return [spell_out_patterns(v) for v in schema]
    return schema


def drop_patterns(schema: Any) -> Any:
    """A copy of a JSON schema without ``pattern`` constraints."""
    if isinstance(schema, dict):
        return {
            k: drop_patterns(v)
            for k, v in schema.items()
            if not (k == "pattern" and isinstance(v, str))  # not a property named "pattern"
        }
    if isinstance(schema, list):
        return [drop_patterns(v) for v in schema]
    return schema


@atexit.register
def _close_engines() -> None:
    # Free the models while llama_cpp's module globals still exist (avoids noise at exit).
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.llm.close()
        _ENGINES.clear()


def default_threads() -> int:
    """CPU threads per model: ``$RAPPORT_THREADS``, else 2 (the two-core machine we plan for).

    Raises:
        ModelError: ``RAPPORT_THREADS`` is not a positive integer.
    """
    raw = os.environ.get("RAPPORT_THREADS", "2")
    if not raw.isdigit() or int(raw) < 1:
        raise ModelError(f"RAPPORT_THREADS must be a positive integer, not {raw!r}")
    return int(raw)


def load_engine(
    path: Path, *, n_ctx: int = 8192, n_threads: int = 2, prefix_cache_mb: int = 768
) -> LlamaEngine:
    """The process-wide engine of a GGUF file, loaded on first use.

    The first load fixes the engine's settings; later calls with other settings share it.
    """
    key = path.resolve()
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = LlamaEngine(
                key, n_ctx=n_ctx, n_threads=n_threads, prefix_cache_mb=prefix_cache_mb
            )
            _ENGINES[key] = engine
        elif engine.n_ctx != n_ctx:
            log.info("%s is already loaded with n_ctx=%d; sharing it", key.name, engine.n_ctx)
        return engine


def _spec_options(query: str) -> dict[str, int]:
    """``n_ctx=16384&n_threads=2`` -> options (whole numbers only)."""
    options: dict[str, int] = {}
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        if not value.strip().isdigit():
            raise ModelError(f"llamacpp option '{pair}' must be NAME=WHOLE_NUMBER")
        options[key.strip()] = int(value)
    return options


class LlamaCppAPI:
    """A GGUF model through llama-cpp-python, in this process.

    Args:
        path: the GGUF file.
        name: the spec string this provider reports (``llamacpp/qwen2.5-coder-1.5b``).
        n_ctx: context size in tokens.
        n_threads: CPU threads.
        prefix_cache_mb: memory for saved contexts of interleaved conversations; 0 disables.
    """

    def __init__(
        self,
        path: Path,
        *,
        name: str,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        prefix_cache_mb: int = 768,
    ) -> None:
        self.path = path
        self.name = name
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else default_threads()
        self.prefix_cache_mb = prefix_cache_mb

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> LlamaCppAPI:
        """``llamacpp/qwen2.5-coder-1.5b`` (embedded, joined on first use), ``llamacpp/PATH.gguf``.

        Options: ``n_ctx`` (8192), ``n_threads`` (`default_threads`), ``prefix_cache_mb`` (768),
        as keyword arguments or in the spec: ``llamacpp/qwen2.5-coder-0.5b?n_ctx=16384``.

        Raises:
            ModelError: unknown model, weights not installed or damaged, missing file.
        """
        rest, _, query = rest.partition("?")
        options = {**_spec_options(query), **options}
        unknown = set(options) - {"n_ctx", "n_threads", "prefix_cache_mb"}
        if unknown:
            raise ModelError(f"unknown llamacpp options: {', '.join(sorted(unknown))}")
        return cls(resolve_gguf(rest), name=f"llamacpp/{rest}", **options)

    def engine(self) -> LlamaEngine:
        """The shared engine of this model file (loads it; blocking)."""
        return load_engine(
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            prefix_cache_mb=self.prefix_cache_mb,
        )

    async def complete(self, request: Request) -> Completion:
        """Complete one request on the llama.cpp worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_WORKER, self._complete_blocking, request)

    def _complete_blocking(self, request: Request) -> Completion:
        return self.engine().complete(request)


_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
