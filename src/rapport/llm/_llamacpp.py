"""The ``llamacpp`` provider: GGUF models run in-process by llama-cpp-python.

One model per file per process, shared by every role and instance. Its calls are decoded
by a `BatchDecoder` on one thread: up to ``parallel`` calls in flight (the run's
``--concurrency``) are decoded together, one sequence each, in one llama.cpp context, so
the weights are read once per step for all of them; the event loop stays free.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._batched import BatchDecoder
from ._chat import chat_messages, parse_tool_calls, tools_payload
from ._model import Completion, ModelAPI, Request, TextSink
from ._prefix_cache import PrefixStateCache
from ._types import GenerateConfig, ModelError, Usage
from ._weights import resolve_gguf

log = logging.getLogger(__name__)

MAX_PARALLEL = 16
"""The most sequences a run's concurrency opens (KV memory grows with each; on a CPU the
aggregate speed stops growing well before this)."""

INSTALL_HINT = "pip install 'rapport-toolkit[llamacpp]'  (llama-cpp-python, compiled by pip)"

# Loads run here, one at a time, off the event loop; decoding runs on each engine's thread.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rapport-llamacpp-load")
_ENGINES: dict[Path, LlamaEngine] = {}
_VOCABS: dict[Path, Any] = {}
_ENGINES_LOCK = threading.Lock()


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(f"the llamacpp provider needs llama-cpp-python: {INSTALL_HINT}") from exc
    return llama_cpp


class LlamaEngine:
    """A loaded GGUF model with its chat formatter, grammar cache and batch decoder.

    Args:
        path: the GGUF file.
        n_ctx: context size per sequence in tokens.
        n_threads: CPU threads for decoding and prompt evaluation.
        prefix_cache_mb: memory for saved sequence states (see `PrefixStateCache`); 0
            disables.
        parallel: sequences decoded together (grows with `reserve`).
    """

    def __init__(
        self, path: Path, *, n_ctx: int, n_threads: int, prefix_cache_mb: int, parallel: int = 1
    ) -> None:
        llama_cpp = _import_llama_cpp()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        try:
            # This context is only the template for the decoder's (which holds the KV cache).
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=256,
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
        self.prefix_cache = PrefixStateCache(prefix_cache_mb << 20)
        self.decoder = BatchDecoder(
            self,
            n_ctx=n_ctx,
            n_threads=n_threads,
            parallel=parallel,
            prefix_cache=self.prefix_cache,
        )
        self._n_ctx = n_ctx
        self._grammars: dict[str, Any] = {}
        self._n_vocab = int(self.llm.n_vocab())
        template = self.llm.metadata.get("tokenizer.chat_template") or _CHATML
        eos = self.llm.detokenize([self.llm.token_eos()], special=True).decode(errors="ignore")
        self.eos_token = eos
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token="")

    @property
    def n_ctx(self) -> int:
        """The context size per sequence in tokens."""
        return self._n_ctx

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

    def sampler(self, ctx: Any, config: GenerateConfig, grammar: Any) -> TokenSampler:
        """A sampler over the logits of context `ctx` (close it after use)."""
        return TokenSampler(self.llm, ctx, config, grammar)

    def submit(self, request: Request, on_text: Callable[[str], None] | None = None) -> Any:
        """Queue one call on the decoder; a `concurrent.futures.Future` of its completion.
        With `on_text`, the text goes to it piece by piece (from the decoder's thread)."""
        return self.decoder.submit(request, on_text)

    def complete(self, request: Request) -> Completion:
        """Run one request to completion (blocking; not on the decoder's thread)."""
        return self.complete_many([request])[0]

    def complete_many(self, requests: list[Request]) -> list[Completion]:
        """Run requests together, up to the decoder's parallelism (blocking)."""
        self.decoder.reserve(len(requests))
        futures = self.decoder.submit_many(requests)
        return [f.result() for f in futures]

    def reset(self) -> None:
        """Empty every sequence and forget saved states (benchmarks, tests)."""
        self.decoder.reset()

    def completion(self, request: Request, prompt: list[int], out: list[int]) -> Completion:
        """The `Completion` of generated tokens `out` (tool calls parsed, stop strings cut)."""
        text = self._text(out, request.config.stop)
        usage = Usage(prompt_tokens=len(prompt), completion_tokens=len(out))
        if request.tools:
            text, calls = parse_tool_calls(text, [t.name for t in request.tools])
            return Completion(text=text, tool_calls=calls, usage=usage)
        return Completion(text=text.strip(), usage=usage)

    def is_end(self, token: int) -> bool:
        """Whether a token ends the turn."""
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))

    def hit_stop(self, out: list[int], stop: tuple[str, ...]) -> bool:
        """Whether the text so far contains a stop string."""
        return bool(stop) and any(s in self._text(out, ()) for s in stop)

    def text_so_far(self, out: list[int]) -> str:
        """The text of the tokens generated so far, an incomplete character left out."""
        return self._text(out, ())

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


class TokenSampler:
    """Token sampling over one row of a context's logits, with a lazily applied grammar.

    The chain is greedy at temperature 0, else top-p, temperature and a seeded draw. The
    grammar is applied lazily, as llama.cpp's own server does: a token is first drawn from
    the unconstrained distribution and checked against the grammar alone; only when the
    grammar rejects it are all candidates masked and the token drawn again (the full mask
    costs tens of ms per token on Qwen's vocabulary). Free it with `close` (llama.cpp
    samplers are C objects).
    """

    def __init__(self, llm: Any, ctx: Any, config: GenerateConfig, grammar: Any) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._ctx = ctx
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

    def close(self) -> None:
        """Free the C samplers (idempotent)."""
        if self._chain is not None:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None
        if self._grammar is not None:
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None

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

    def sample(self, row: int = -1) -> int:
        """The next token from the logits of batch row `row` (accepted by the grammar,
        which is advanced past it)."""
        import numpy as np

        pointer = self._lib.llama_get_logits_ith(self._ctx, row)
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
            engine.decoder.close()
            engine.llm.close()
        _ENGINES.clear()
        for vocab in _VOCABS.values():
            vocab.close()
        _VOCABS.clear()


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
    path: Path,
    *,
    n_ctx: int = 8192,
    n_threads: int = 2,
    prefix_cache_mb: int = 768,
    parallel: int = 1,
) -> LlamaEngine:
    """The process-wide engine of a GGUF file, loaded on first use.

    The first load fixes the engine's settings but its parallelism, which only grows;
    later calls with other settings share it.
    """
    key = path.resolve()
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = LlamaEngine(
                key,
                n_ctx=n_ctx,
                n_threads=n_threads,
                prefix_cache_mb=prefix_cache_mb,
                parallel=parallel,
            )
            _ENGINES[key] = engine
        engine.decoder.reserve(parallel)
        if engine.n_ctx != n_ctx:
            log.info("%s is already loaded with n_ctx=%d; sharing it", key.name, engine.n_ctx)
        return engine


def load_vocab(path: Path) -> Any:
    """The tokenizer of a GGUF file: a llama.cpp model of its vocabulary alone (no weights,
    no context), loaded once per file per process; its ``tokenize(text, add_bos, special)``
    gives token ids.

    Raises:
        ModelError: llama-cpp-python is missing, or it cannot read the file.
    """
    key = path.resolve()
    with _ENGINES_LOCK:
        vocab = _VOCABS.get(key)
        if vocab is None:
            llama_cpp = _import_llama_cpp()
            from llama_cpp._internals import LlamaModel

            params = llama_cpp.llama_model_default_params()
            params.vocab_only = True
            try:
                # `Llama(vocab_only=True)` would also build a context, which warns on stderr.
                vocab = LlamaModel(path_model=str(key), params=params, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(f"llama.cpp cannot read the vocabulary of {key}: {exc}") from exc
            _VOCABS[key] = vocab
        return vocab


def _spec_options(query: str) -> dict[str, int]:
    """``n_ctx=16384&n_threads=2`` -> options (whole numbers only)."""
    options: dict[str, int] = {}
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        if not value.strip().isdigit():
            raise ModelError(f"llamacpp option '{pair}' must be NAME=WHOLE_NUMBER")
        options[key.strip()] = int(value)
    return options


class LlamaCppAPI(ModelAPI):
    """A GGUF model through llama-cpp-python, in this process.

    Args:
        path: the GGUF file.
        name: the spec string this provider reports (``llamacpp/qwen2.5-coder-1.5b``).
        n_ctx: context size per sequence in tokens.
        n_threads: CPU threads.
        prefix_cache_mb: memory for saved states of interleaved conversations; 0 disables.
        parallel: calls decoded together (one sequence each); a run raises it to its
            ``--concurrency`` (`set_concurrency`).
    """

    path: Path

    def __init__(
        self,
        path: Path,
        *,
        name: str,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        prefix_cache_mb: int = 768,
        parallel: int = 1,
    ) -> None:
        if parallel < 1:
            raise ModelError(f"parallel must be at least 1, not {parallel}")
        self.path = path
        self.name = name
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else default_threads()
        self.prefix_cache_mb = prefix_cache_mb
        self.parallel = parallel

    def set_concurrency(self, concurrency: int) -> None:
        """Decode up to `concurrency` calls together (a run's ``--concurrency``), at most
        `MAX_PARALLEL` (each sequence holds ``n_ctx`` tokens of KV cache; more calls wait)."""
        self.parallel = max(self.parallel, min(concurrency, MAX_PARALLEL))

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> LlamaCppAPI:
        """``llamacpp/qwen2.5-coder-1.5b`` (embedded, joined on first use), ``llamacpp/PATH.gguf``.

        Options: ``n_ctx`` (8192), ``n_threads`` (`default_threads`), ``prefix_cache_mb``
        (768), ``parallel`` (1; a run raises it to its concurrency), as keyword arguments or in
        the spec: ``llamacpp/qwen2.5-coder-0.5b?n_ctx=16384``.

        Raises:
            ModelError: unknown model, weights not installed or damaged, missing file.
        """
        rest, _, query = rest.partition("?")
        options = {**_spec_options(query), **options}
        unknown = set(options) - {"n_ctx", "n_threads", "prefix_cache_mb", "parallel"}
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
            parallel=self.parallel,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in the model's vocabulary, as plain text (no BOS, special tokens
        not parsed); only the vocabulary is loaded for it (`load_vocab`).

        Raises:
            ModelError: the vocabulary cannot be read.
        """
        tokens = load_vocab(self.path).tokenize(text.encode(), add_bos=False, special=False)
        return len(tokens)

    async def complete(self, request: Request) -> Completion:
        """Complete one request: queued on the engine's decoder, batched with the others."""
        loop = asyncio.get_running_loop()
        engine = await loop.run_in_executor(_WORKER, self.engine)
        return await asyncio.wrap_future(engine.submit(request))

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        """Complete one request, its text handed to `on_text` token by token as the decoder
        produces it. A request with tools or a schema is completed whole (its text handed
        over once): its raw text holds the call's markup or JSON."""
        if request.tools or request.json_schema is not None:
            return await super().stream(request, on_text)
        loop = asyncio.get_running_loop()
        engine = await loop.run_in_executor(_WORKER, self.engine)

        def hand_on(piece: str) -> None:  # on the decoder's thread
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is watching
                loop.call_soon_threadsafe(on_text, piece)

        return await asyncio.wrap_future(engine.submit(request, hand_on))


_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
