"""Deterministic prefix reuse for llama.cpp: aligned prefill plus saved contexts.

Reusing an evaluated prefix is what makes multi-turn conversations affordable on a CPU
(turn 2 costs about a third of a full re-evaluation). Done naively it also changes the
numbers: a prefix evaluated in batches cut at different places gives slightly different
floats, so greedy text can depend on what ran before, and a resumed run would not repeat
an uninterrupted one.

Here every prompt is evaluated in chunks of `chunk` tokens aligned to absolute positions,
and only whole aligned chunks that were evaluated as prompt ("clean" tokens) are ever
reused. Each chunk is then computed from the same inputs whether or not it was reused, so
reuse saves time without changing any output.

When two conversations alternate on one model (the agent and the simulated user), each call
throws the other's prefix away; an LRU of saved contexts keyed by their clean tokens brings
the best one back. `Llama.save_state` copies a score buffer of up to ``n_batch x n_vocab``
floats with every state (hundreds of MB for Qwen's vocabulary), so context bytes are saved
directly.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixStateCache:
    """Aligned prefill of one `llama_cpp.Llama` and an LRU of its saved clean contexts.

    Args:
        capacity_bytes: total size of saved contexts kept; 0 keeps none (the live context is
            still reused).
        chunk: prefill chunk size in tokens; reuse happens at multiples of it.
        min_gain: restore a saved context only when it offers at least this many more
            reusable tokens than the live context (restoring costs a copy of the state).
    """

    def __init__(self, capacity_bytes: int, *, chunk: int = 64, min_gain: int = 64) -> None:
        self.capacity_bytes = capacity_bytes
        self.chunk = chunk
        self.min_gain = min_gain
        self.clean = 0
        """Leading tokens of the live context that were evaluated as aligned prompt chunks."""
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.restored_tokens = 0
        """Prompt tokens not re-evaluated thanks to restores (a counter for benchmarks)."""
        self.reused_tokens = 0
        """Prompt tokens not re-evaluated in all (live context and restores)."""

    @property
    def size_bytes(self) -> int:
        """Bytes held by saved contexts."""
        return sum(len(s) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def _usable(self, held: Sequence[int], prompt: Sequence[int]) -> int:
        shared = common_prefix(held, prompt)
        return shared // self.chunk * self.chunk

    def prefill(self, llm: Any, prompt: Sequence[int]) -> None:
        """Evaluate all but the last chunk of `prompt` in aligned chunks, reusing what it can.

        Leaves the context holding ``A`` clean tokens, ``A`` the last chunk boundary before
        the prompt's end; `Llama.generate` then evaluates the rest in one batch and samples.
        """
        live = llm.input_ids[: min(llm.n_tokens, self.clean)].tolist()
        reuse = self._usable(live, prompt)
        best_key, best = None, reuse
        for key in self._states:
            usable = self._usable(key, prompt)
            if usable > best:
                best_key, best = key, usable
        if best_key is not None and best - reuse >= self.min_gain:
            self._restore(llm, best_key)
            self.restored_tokens += best - reuse
            reuse = best
        end = (len(prompt) - 1) // self.chunk * self.chunk
        reuse = min(reuse, end)
        self.reused_tokens += reuse
        llm.n_tokens = reuse  # `eval` drops every cell from n_tokens on
        for start in range(reuse, end, self.chunk):
            llm.eval(prompt[start : start + self.chunk])
        self.clean = end

    def save(self, llm: Any) -> None:
        """Save the live context's clean part (after a call), replacing saved prefixes of it."""
        if self.capacity_bytes <= 0 or self.clean == 0:
            return
        import llama_cpp

        key = tuple(llm.input_ids[: self.clean].tolist())
        if key in self._states:
            self._states.move_to_end(key)
            return
        for old in [k for k in self._states if k == key[: len(k)]]:
            del self._states[old]
        size = llama_cpp.llama_state_get_size(llm.ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(llm.ctx, buffer, size)
        self._states[key] = ctypes.string_at(buffer, written)
        while self.size_bytes > self.capacity_bytes and self._states:
            self._states.popitem(last=False)

    def reset(self) -> None:
        """Forget the live context (after an engine reset); saved contexts stay."""
        self.clean = 0

    def _restore(self, llm: Any, key: tuple[int, ...]) -> None:
        import llama_cpp

        state = self._states[key]
        self._states.move_to_end(key)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(llm.ctx, buffer, len(state)) != len(state):
            llm.reset()
            self.clean = 0
            return
        # The saved state may hold more cells than the clean key; `eval` trims past n_tokens.
        llm.input_ids[: len(key)] = key
        llm.n_tokens = len(key)
        self.clean = len(key)
