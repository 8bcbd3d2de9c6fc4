"""Deterministic prefix reuse for llama.cpp: aligned prefill plus saved sequence states.

Reusing an evaluated prefix is what makes multi-turn conversations affordable on a CPU
(turn 2 costs about a third of a full re-evaluation). Done naively it also changes the
numbers: a prefix evaluated in batches cut at different places gives slightly different
floats, so greedy text can depend on what ran before, and a resumed run would not repeat
an uninterrupted one.

Here every prompt is evaluated in chunks of `chunk` tokens aligned to absolute positions,
and only whole aligned chunks that were evaluated as prompt ("clean" tokens) are ever
reused. Each chunk is then computed from the same inputs whether or not it was reused, so
reuse saves time without changing any output.

The engine decodes several sequences in one context (one per call in flight); each keeps
its clean prefix after its call. When conversations alternate (the agent and the simulated
user of many sessions), an LRU of saved sequence states keyed by their clean tokens brings
the best one back into a free sequence.
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
    """Aligned prefill arithmetic and an LRU of saved clean sequence states.

    Args:
        capacity_bytes: total size of saved states kept; 0 keeps none (the live sequences
            are still reused).
        chunk: prefill chunk size in tokens; reuse happens at multiples of it.
        min_gain: restore a saved state only when it offers at least this many more
            reusable tokens than the live sequence (restoring costs a copy of the state).
    """

    def __init__(self, capacity_bytes: int, *, chunk: int = 64, min_gain: int = 64) -> None:
        self.capacity_bytes = capacity_bytes
        self.chunk = chunk
        self.min_gain = min_gain
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.restored_tokens = 0
        """Prompt tokens not re-evaluated thanks to restores (a counter for benchmarks)."""
        self.reused_tokens = 0
        """Prompt tokens not re-evaluated in all (live sequences and restores)."""

    @property
    def size_bytes(self) -> int:
        """Bytes held by saved states."""
        return sum(len(s) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def usable(self, held: Sequence[int], prompt: Sequence[int]) -> int:
        """Tokens of `prompt` a sequence holding `held` (clean) can skip: whole chunks."""
        return common_prefix(held, prompt) // self.chunk * self.chunk

    def prefill_end(self, prompt: Sequence[int]) -> int:
        """Where aligned prefill stops: the last chunk boundary before the prompt's end."""
        return (len(prompt) - 1) // self.chunk * self.chunk

    def best_saved(self, prompt: Sequence[int], live: int) -> tuple[tuple[int, ...], int] | None:
        """The saved state worth restoring for `prompt` over `live` reusable tokens, if any."""
        best_key, best = None, live
        for key in self._states:
            usable = self.usable(key, prompt)
            if usable > best:
                best_key, best = key, usable
        if best_key is None or best - live < self.min_gain:
            return None
        return best_key, best

    def save(self, ctx: Any, seq: int, key: tuple[int, ...]) -> None:
        """Save sequence `seq` (holding exactly the clean tokens `key`), replacing prefixes."""
        if self.capacity_bytes <= 0 or not key:
            return
        import llama_cpp

        if key in self._states:
            self._states.move_to_end(key)
            return
        for old in [k for k in self._states if k == key[: len(k)]]:
            del self._states[old]
        size = llama_cpp.llama_state_seq_get_size(ctx, seq)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, seq)
        self._states[key] = ctypes.string_at(buffer, written)
        while self.size_bytes > self.capacity_bytes and self._states:
            self._states.popitem(last=False)

    def restore(self, ctx: Any, seq: int, key: tuple[int, ...]) -> bool:
        """Load a saved state into sequence `seq` (emptied first); False if refused."""
        import llama_cpp

        state = self._states[key]
        self._states.move_to_end(key)
        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(ctx), seq, -1, -1)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        return bool(llama_cpp.llama_state_seq_set_data(ctx, buffer, len(state), seq) == len(state))

    def clear(self) -> None:
        """Forget every saved state."""
        self._states.clear()
