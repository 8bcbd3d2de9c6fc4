"""Batched decoding: calls in flight on one model decoded together in one llama.cpp context.

On a CPU, generating a token of a 1 GB model is bound by reading the weights once; a batch
of one token from each of K sequences reads them once for all K. The decoder holds one
context with K sequences (llama.cpp's per-sequence ids and KV streams, as its server's
parallel slots do). A call takes a free sequence, evaluates its prompt there in aligned
chunks (reusing that sequence's clean prefix, or restoring a saved one; see
`PrefixStateCache`), and joins the batch: each step decodes the last token of every
generating sequence in one `llama_decode` and samples each with its own sampler, grammar
and seed. All llama.cpp work runs on the decoder's one thread.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._lockstep import LOCKSTEP, current_key
from ._model import Completion, Request
from ._prefix_cache import PrefixStateCache
from ._types import ContextFull, ModelError

if TYPE_CHECKING:
    from ._llamacpp import LlamaEngine, TokenSampler

log = logging.getLogger(__name__)


@dataclass
class _Slot:
    seq: int
    tokens: list[int] = field(default_factory=list)
    """The clean tokens this sequence holds (positions 0 ..)."""
    busy: bool = False


@dataclass
class _Job:
    request: Request
    future: concurrent.futures.Future[Completion]
    prompt: list[int] = field(default_factory=list)
    slot: _Slot | None = None
    sampler: TokenSampler | None = None
    out: list[int] = field(default_factory=list)
    max_tokens: int = 0
    clean: int = 0
    key: int | None = None
    """The job's order among calls waiting together (None: not a lockstep participant)."""
    arrival: int = 0
    on_text: Callable[[str], None] | None = None
    """Takes the reply's text piece by piece as it is decoded (on the decoder's thread)."""
    shown: str = ""
    """The text handed to `on_text` so far."""


class BatchDecoder:
    """Decodes the calls submitted to one engine, up to `parallel` at once.

    Args:
        engine: the loaded model (chat template, tokenizer, grammars, sampling).
        n_ctx: context size per sequence in tokens.
        n_threads: CPU threads.
        parallel: sequences in flight (1 decodes calls one after the other).
        prefix_cache: aligned prefill and saved sequence states.
    """

    def __init__(
        self,
        engine: LlamaEngine,
        *,
        n_ctx: int,
        n_threads: int,
        parallel: int,
        prefix_cache: PrefixStateCache,
    ) -> None:
        self.engine = engine
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.parallel = 0
        self.prefix_cache = prefix_cache
        self.steps = 0
        """Batched generation steps decoded (a counter for benchmarks)."""
        self.stepped_tokens = 0
        """Tokens decoded in those steps (their mean batch size is this over `steps`)."""
        self._want = max(1, parallel)
        self._ctx: Any = None
        self._batch: Any = None
        self._slots: list[_Slot] = []
        self._pending: deque[_Job] = deque()
        self._active: list[_Job] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._arrivals = 0

    # -- the caller's side ---------------------------------------------------------------

    def submit(
        self, request: Request, on_text: Callable[[str], None] | None = None
    ) -> concurrent.futures.Future[Completion]:
        """Queue one call; its future resolves to the completion (or a `ModelError`).
        With `on_text`, the reply's text goes to it piece by piece as it is decoded (called
        on the decoder's thread: it must only hand the piece on)."""
        return self.submit_many([request], on_text)[0]

    def submit_many(
        self, requests: list[Request], on_text: Callable[[str], None] | None = None
    ) -> list[concurrent.futures.Future[Completion]]:
        """Queue calls at once (they start in the same step when sequences are free)."""
        key = current_key()
        jobs = [_Job(r, concurrent.futures.Future(), key=key, on_text=on_text) for r in requests]
        with self._cond:
            if self._closed:
                raise ModelError(f"the engine of {self.engine.path.name} is closed")
            for job in jobs:
                self._arrivals += 1
                job.arrival = self._arrivals
                if job.key is not None:
                    LOCKSTEP.waiting()
                self._pending.append(job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="rapport-llamacpp", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return [job.future for job in jobs]

    def reserve(self, parallel: int) -> None:
        """Let up to `parallel` sequences be in flight (the context grows when idle)."""
        with self._cond:
            self._want = max(self._want, parallel)

    def reset(self) -> None:
        """Empty every sequence and forget saved states (benchmarks, tests). Call when idle."""
        with self._cond:
            self._cond.wait_for(lambda: not self._pending and not self._active, timeout=600)
            if self._ctx is not None:
                import llama_cpp

                llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self._ctx.ctx), True)
            for slot in self._slots:
                slot.tokens = []
            self.prefix_cache.clear()

    def close(self) -> None:
        """Stop the thread and free the context (at exit)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(30)
        self._free()

    # -- the decoder thread --------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self._pending or self._active)
            LOCKSTEP.wait_quiet()  # every session of the run waits on a call or is done
            with self._cond:
                if self._closed:
                    self._fail(self._active + list(self._pending), "the engine closed")
                    return
                if not self._active and self._want > self.parallel:
                    self._build_context()
                ordered = sorted(self._pending, key=_order)
                free = sum(not s.busy for s in self._slots)
                admitted, self._pending = ordered[:free], deque(ordered[free:])
            for job in admitted:
                self._admit(job)
            if self._active:
                self._step()
            with self._cond:
                self._cond.notify_all()

    def _build_context(self) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self._free()
        want = self._want
        params = llama_cpp.llama_context_params()
        ctypes.pointer(params)[0] = self.engine.llm.context_params
        params.n_ctx = self.n_ctx * want
        params.n_seq_max = want
        params.kv_unified = False  # one KV stream per sequence: alone or not, same layout
        params.n_threads = params.n_threads_batch = self.n_threads
        model = self.engine.llm._model
        self._ctx = _internals.LlamaContext(model=model, params=params, verbose=False)
        size = max(self.prefix_cache.chunk, want, 1)
        self._batch = llama_cpp.llama_batch_init(size, 0, 1)
        self._slots = [_Slot(seq) for seq in range(want)]
        self.parallel = want
        self.prefix_cache.clear()  # saved states belong to a context of one shape

    def _free(self) -> None:
        import llama_cpp

        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None

    def _admit(self, job: _Job) -> None:
        """Evaluate a call's prompt in a free sequence and draw its first token."""
        try:
            self._prepare(job)
            self._prefill(job)
        except ModelError as exc:
            self._release(job, clean=False)
            _resolve(job, exc)
            return
        except (ValueError, RuntimeError) as exc:
            self._release(job, clean=False)
            _resolve(job, self._error(exc))
            return
        self._active.append(job)
        self._after_token(job, self._draw(job, self._last_row))

    def _prepare(self, job: _Job) -> None:
        engine, request = self.engine, job.request
        job.prompt = engine.tokenize(engine.render(request))
        room = self.n_ctx - len(job.prompt)
        if room <= 0:
            raise ContextFull(
                f"the prompt has {len(job.prompt)} tokens, more than the context of "
                f"{self.n_ctx} of {engine.path.name}; shorten it or raise n_ctx"
            )
        job.max_tokens = min(request.config.max_tokens, room)
        schema = request.json_schema
        grammar = engine.grammar(schema) if schema is not None else None
        job.sampler = engine.sampler(self._ctx.ctx, request.config, grammar)

    def _prefill(self, job: _Job) -> None:
        cache, prompt = self.prefix_cache, job.prompt
        free = [s for s in self._slots if not s.busy]
        slot = max(free, key=lambda s: (cache.usable(s.tokens, prompt), -s.seq))
        slot.busy, job.slot = True, slot
        reuse = cache.usable(slot.tokens, prompt)
        saved = cache.best_saved(prompt, reuse)
        if saved is not None and cache.restore(self._ctx.ctx, slot.seq, saved[0]):
            cache.restored_tokens += saved[1] - reuse
            slot.tokens, reuse = list(saved[0]), saved[1]
        end = cache.prefill_end(prompt)
        reuse = min(reuse, end)
        cache.reused_tokens += reuse
        self._trim(slot, reuse)
        for start in range(reuse, end, cache.chunk):
            self._decode_prompt(slot.seq, prompt, start, start + cache.chunk)
        job.clean = end
        self._decode_prompt(slot.seq, prompt, end, len(prompt))

    def _trim(self, slot: _Slot, keep: int) -> None:
        import llama_cpp

        memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        llama_cpp.llama_memory_seq_rm(memory, slot.seq, keep, -1)
        slot.tokens = slot.tokens[:keep]

    def _decode_prompt(self, seq: int, prompt: Sequence[int], start: int, stop: int) -> None:
        rows = [(prompt[i], i, seq) for i in range(start, stop)]
        self._decode(rows)
        self._last_row = len(rows) - 1

    def _decode(self, rows: list[tuple[int, int, int]], *, every_row: bool = False) -> None:
        """One `llama_decode` of (token, position, sequence) rows; logits of the last row
        (of every row with `every_row`)."""
        import llama_cpp

        batch = self._batch
        batch.n_tokens = len(rows)
        for i, (token, pos, seq) in enumerate(rows):
            batch.token[i], batch.pos[i] = token, pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = int(every_row)
        batch.logits[len(rows) - 1] = 1
        code = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def _step(self) -> None:
        """Decode the last token of every generating sequence together; draw each next one."""
        jobs = sorted(self._active, key=lambda j: j.slot.seq if j.slot else 0)
        rows = [(j.out[-1], len(j.prompt) + len(j.out) - 1, j.slot.seq) for j in jobs if j.slot]
        try:
            self._decode(rows, every_row=True)
        except (ValueError, RuntimeError) as exc:
            for job in jobs:
                self._active.remove(job)
                self._release(job, clean=False)
                _resolve(job, self._error(exc))
            return
        self.steps += 1
        self.stepped_tokens += len(rows)
        for row, job in enumerate(jobs):
            self._after_token(job, self._draw(job, row))

    def _draw(self, job: _Job, row: int) -> int:
        assert job.sampler is not None
        return job.sampler.sample(row)

    def _after_token(self, job: _Job, token: int) -> None:
        engine, config = self.engine, job.request.config
        if engine.is_end(token):
            return self._finish(job)
        job.out.append(token)
        if engine.hit_stop(job.out, config.stop) or len(job.out) >= job.max_tokens:
            self._finish(job)
        elif job.on_text is not None:
            self._show(job)
        return None

    def _show(self, job: _Job) -> None:
        """Hand a streamed call the text its new token completed (a token that ends inside
        a multi-byte character waits for the next)."""
        assert job.on_text is not None
        try:
            text = self.engine.text_so_far(job.out)
            if text.startswith(job.shown) and len(text) > len(job.shown):
                job.on_text(text[len(job.shown) :])
                job.shown = text
        except Exception:  # showing the reply early must never fail the call
            log.exception("streaming a reply failed; it is still completed")
            job.on_text = None

    def _finish(self, job: _Job) -> None:
        self._active.remove(job)
        self._release(job, clean=True)
        try:
            result: Completion | ModelError = self.engine.completion(
                job.request, job.prompt, job.out
            )
        except ModelError as exc:
            result = exc
        except Exception as exc:  # a bug in decoding one reply fails that call, not the engine
            result = ModelError(f"reading the reply failed: {type(exc).__name__}: {exc}")
        _resolve(job, result)

    def _release(self, job: _Job, *, clean: bool) -> None:
        if job.sampler is not None:
            job.sampler.close()
            job.sampler = None
        slot = job.slot
        if slot is None:
            return
        if clean:
            self._trim(slot, job.clean)
            slot.tokens = job.prompt[: job.clean]
            self.prefix_cache.save(self._ctx.ctx, slot.seq, tuple(slot.tokens))
        else:
            self._trim(slot, 0)
        slot.busy, job.slot = False, None

    def _error(self, exc: Exception) -> ModelError:
        return ModelError(f"llama.cpp failed on {self.engine.path.name}: {exc}")

    def _fail(self, jobs: list[_Job], why: str) -> None:
        for job in jobs:
            if not job.future.done():
                _resolve(job, ModelError(why))

    _last_row = 0


def _order(job: _Job) -> tuple[bool, int, int]:
    """Lockstep calls by their key, then the others by arrival."""
    return (job.key is None, job.key or 0, job.arrival)


def _resolve(job: _Job, result: Completion | ModelError) -> None:
    if job.key is not None:
        LOCKSTEP.resumed()  # before the caller can run: the next step waits for it
    if isinstance(result, ModelError):
        job.future.set_exception(result)
    else:
        job.future.set_result(result)
