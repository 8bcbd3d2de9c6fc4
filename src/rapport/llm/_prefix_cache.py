"""Saved llama.cpp contexts, so interleaved conversations keep their evaluated prefix.

llama-cpp-python already reuses the longest common token prefix with the *previous* prompt.
When two conversations alternate on one model (the agent and the simulated user), each call
throws the other's prefix away and re-evaluates its whole history. This keeps a small LRU of
saved contexts keyed by their tokens and restores the one sharing the longest prefix with the
next prompt, when that beats what is already in the context.

`Llama.save_state` copies a score buffer of up to ``n_batch x n_vocab`` floats with every
state (hundreds of MB for Qwen's vocabulary), so the context bytes are saved directly here.
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
    """An LRU of saved contexts of one `llama_cpp.Llama`, keyed by the tokens they hold.

    Args:
        capacity_bytes: total size of saved contexts kept; 0 disables the cache.
        min_gain: restore a saved context only when it shares at least this many more
            prompt tokens than the live context (restoring costs a copy of the state).
    """

    def __init__(self, capacity_bytes: int, *, min_gain: int = 64) -> None:
        self.capacity_bytes = capacity_bytes
        self.min_gain = min_gain
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.restored_tokens = 0
        """Prompt tokens not re-evaluated thanks to restores (a counter for benchmarks)."""

    @property
    def size_bytes(self) -> int:
        """Bytes held by saved contexts."""
        return sum(len(s) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def prepare(self, llm: Any, prompt: Sequence[int]) -> None:
        """Restore the saved context sharing the longest prefix with `prompt`, if it pays."""
        if not self._states:
            return
        live = common_prefix(llm.input_ids[: llm.n_tokens].tolist(), prompt)
        best_key, best = None, live
        for key in self._states:
            shared = common_prefix(key, prompt)
            if shared > best:
                best_key, best = key, shared
        if best_key is None or best - live < self.min_gain:
            return
        self._restore(llm, best_key)
        self.restored_tokens += best - live

    def save(self, llm: Any) -> None:
        """Save the live context (after a call), replacing saved prefixes of it."""
        if self.capacity_bytes <= 0 or llm.n_tokens == 0:
            return
        import llama_cpp

        key = tuple(llm.input_ids[: llm.n_tokens].tolist())
        for old in [k for k in self._states if k == key[: len(k)]]:
            del self._states[old]
        size = llama_cpp.llama_state_get_size(llm.ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(llm.ctx, buffer, size)
        self._states[key] = ctypes.string_at(buffer, written)
        while self.size_bytes > self.capacity_bytes and self._states:
            self._states.popitem(last=False)

    def _restore(self, llm: Any, key: tuple[int, ...]) -> None:
        import llama_cpp

        state = self._states[key]
        self._states.move_to_end(key)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(llm.ctx, buffer, len(state)) != len(state):
            llm.reset()
            return
        llm.input_ids[: len(key)] = key
        llm.n_tokens = len(key)
        # The restored logits are not those of a live decode: make generate() replay one token.
        llm._requires_eval = True
