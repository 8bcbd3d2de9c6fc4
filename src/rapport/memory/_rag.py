"""`rag`: embed past utterances and executed calls, retrieve the top-k for the current request.

Dense retrieval with the shared embedder (MiniLM with the ``embeddings`` extra) or BM25
(``bm25s``) when that extra is absent; ``backend`` picks one explicitly.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from rapport.llm import Message, ModelRoles
from rapport.log import MemoryItem, MemoryState, Provenance, SessionRecord, format_call

from ._embed import embedder_name, get_embedder, minilm_path
from ._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef

Backend = Literal["auto", "embed", "bm25", "hashing"]
HALF_SCAN_MIN = 4096
"""Dense indexes at least this large scan a float16 copy first (then rescore exactly)."""
HALF_MARGIN = 4e-3
"""Coarse-scan slack: float16 rounding of unit rows moves a cosine by under 2e-3."""
FLOAT_MARGIN = 1e-4
"""Slack of a float32 scan (its rounding moves a cosine of 384-d unit rows by under 1e-4)."""


class UtteranceIndex:
    """A growing index of texts searched densely (an embedder) or lexically (BM25).

    Dense rows live in one contiguous float32 buffer that grows by doubling (no re-stacking
    per query). Large indexes also keep a float16 copy: a query scans it (half the memory
    traffic, the bound on a 100,000-row scan). Every row within a safe margin of the k-th
    coarse score is then rescored exactly (float64 sums of the stored float32 rows), so the
    ranking is the same whichever scan found the candidates.

    Args:
        backend: ``embed`` (the shared embedder), ``hashing`` (the hashing embedder), ``bm25``.
    """

    def __init__(self, backend: Literal["embed", "bm25", "hashing"]) -> None:
        self.backend = backend
        self.texts: list[str] = []
        self._rows = np.zeros((0, 0), dtype=np.float32)
        self._half = np.zeros((0, 0), dtype=np.float16)
        self._halved = 0  # rows already copied into ``_half``
        self._bm25: Any = None

    def add(self, texts: list[str]) -> None:
        """Index more texts."""
        if not texts:
            return
        self.texts.extend(texts)
        if self.backend == "bm25":
            self._bm25 = None
            return
        unique = list(dict.fromkeys(texts))  # templated corpora repeat many utterances
        rows = {text: i for i, text in enumerate(unique)}
        vectors = self._embedder().encode(unique)
        self._append(vectors[[rows[text] for text in texts]])

    def _append(self, vectors: np.ndarray) -> None:
        start, end = len(self.texts) - len(vectors), len(self.texts)
        if self._rows.shape[0] < end or self._rows.shape[1] != vectors.shape[1]:
            grown = np.zeros((max(end, 2 * self._rows.shape[0]), vectors.shape[1]), np.float32)
            if start:
                grown[:start] = self._rows[:start]
            self._rows = grown
        self._rows[start:end] = vectors

    def _sync_half(self) -> int:
        """Copy rows added since the last scan into the float16 buffer; the row count."""
        n = len(self.texts)
        if self._half.shape != self._rows.shape:
            grown = np.zeros(self._rows.shape, dtype=np.float16)
            if self._half.shape[1:] == self._rows.shape[1:]:
                grown[: self._halved] = self._half[: self._halved]
            else:
                self._halved = 0
            self._half = grown
        self._half[self._halved : n] = self._rows[self._halved : n]
        self._halved = n
        return n

    def _embedder(self) -> Any:
        return get_embedder("hashing" if self.backend == "hashing" else "auto")

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """(position, score) of the best ``k`` texts, best first (ties: earlier first)."""
        if not self.texts or k <= 0:
            return []
        k = min(k, len(self.texts))
        if self.backend == "bm25":
            return self._search_bm25(query, k)
        return self.search_vector(self._embedder().encode([query])[0], k)

    def search_vector(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """`search` with the query already embedded (dense backends only)."""
        if not self.texts or k <= 0:
            return []
        k = min(k, len(self.texts))
        matrix = self._rows[: len(self.texts)]
        coarse = self._half_scores(vector) if len(self.texts) >= HALF_SCAN_MIN else None
        margin = HALF_MARGIN if coarse is not None else FLOAT_MARGIN
        if coarse is None:
            coarse = matrix @ vector
        kth = np.partition(coarse, len(coarse) - k)[len(coarse) - k]
        candidates = np.flatnonzero(coarse >= kth - margin)
        # The same row-by-row float64 sum for every candidate, however it was found, so the
        # ranking does not depend on the index's size or on how BLAS blocks a product.
        exact = (matrix[candidates].astype(np.float64) * vector.astype(np.float64)).sum(axis=1)
        return _top(exact, candidates, k)

    def _half_scores(self, vector: np.ndarray) -> np.ndarray | None:
        """Float16 scores of every row (None without torch)."""
        try:
            import torch
        except ImportError:
            return None
        n = self._sync_half()
        query = torch.from_numpy(vector.astype(np.float16))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # memory-bound: a second thread buys little on a busy CPU
        try:
            half = torch.mv(torch.from_numpy(self._half[:n]), query)
        finally:
            torch.set_num_threads(threads)
        scores: np.ndarray = half.numpy().astype(np.float32)
        return scores

    def _search_bm25(self, query: str, k: int) -> list[tuple[int, float]]:
        import bm25s

        if self._bm25 is None:
            self._bm25 = bm25s.BM25()
            self._bm25.index(bm25s.tokenize(self.texts, show_progress=False), show_progress=False)
        tokens = bm25s.tokenize([query], show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self._bm25.retrieve(tokens, k=k, show_progress=False)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def _top(scores: np.ndarray, positions: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` best (position, score), best first; equal scores keep position order."""
    order = np.lexsort((positions, -scores))[:k]
    return [(int(positions[i]), float(scores[i])) for i in order]


def resolve_backend(backend: Backend) -> Literal["embed", "bm25", "hashing"]:
    """``auto``: dense MiniLM when the embeddings extra is installed, else BM25."""
    if backend == "auto":
        return "embed" if minilm_path() is not None else "bm25"
    return backend


def record_units(record: SessionRecord) -> list[tuple[str, int | None]]:
    """The retrievable units of a session: each utterance and each executed call."""
    units: list[tuple[str, int | None]] = []
    for turn in record.turns:
        for call in turn.tool_calls:
            units.append((f"call: {format_call(call.name, call.arguments)}", turn.index))
        if turn.text and turn.speaker in ("user", "agent"):
            units.append((f"{turn.speaker}: {turn.text}", turn.index))
    return units


class RagMemory(BaseMemory):
    """Retrieval over past utterances and calls; the request (and target API) is the query.

    Args:
        models: unused (no model calls).
        k: how many units to retrieve.
        backend: ``auto`` | ``embed`` | ``bm25`` | ``hashing``.
    """

    name = "rag"

    def describe(self) -> str:
        named = {"embed": f"dense, {embedder_name('auto')}", "bm25": "BM25 (bm25s)"}
        return named.get(self.backend, self.backend)

    roles = ()

    class Options(MemoryOptions):
        k: int = Field(default=6, ge=1)
        """How many units to retrieve."""
        backend: Backend = "auto"
        """``auto`` (MiniLM when installed, else BM25), ``embed``, ``bm25`` or ``hashing``."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self.k = self.options.k
        self.backend = resolve_backend(self.options.backend)
        self._indexes: dict[str, UtteranceIndex] = {}
        self._task: dict[str, str] = {}

    def _index(self, user: UserRef) -> UtteranceIndex:
        if user.id not in self._indexes:
            index = UtteranceIndex(self.backend)
            index.add([item.text for item in self.state(user).items])
            self._indexes[user.id] = index
        return self._indexes[user.id]

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        self._task[user.id] = session.task
        return ""

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        said = " ".join(m.content for m in conversation if m.role == "user")
        query = f"{self._task.get(user.id, '')} {said}".strip()
        if not query:
            return ""
        items = self.state(user).items
        hits = self._index(user).search(query, self.k)
        lines = [
            f"- [session {items[i].provenance[0].session + 1}] {items[i].text}" for i, _ in hits
        ]
        return "From past sessions:\n" + "\n".join(lines) if lines else ""

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        state, index = self.state(user), self._index(user)
        new = [
            MemoryItem(
                id=f"u{len(state.items) + i}",
                text=text,
                provenance=[Provenance(session=record.index, turn=turn)],
            )
            for i, (text, turn) in enumerate(record_units(record))
        ]
        state.items.extend(new)
        index.add([item.text for item in new])

    def restore(self, user: UserRef, state: MemoryState) -> None:
        super().restore(user, state)
        self._indexes.pop(user.id, None)
