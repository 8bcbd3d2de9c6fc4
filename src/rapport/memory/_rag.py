"""`rag`: embed past utterances and executed calls, retrieve the top-k for the current request.

Dense retrieval with the shared embedder (MiniLM with the ``embeddings`` extra) or BM25
(``bm25s``) when that extra is absent; ``backend`` picks one explicitly.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rapport.llm import Message, ModelRoles
from rapport.log import MemoryItem, MemoryState, Provenance, SessionRecord

from ._embed import get_embedder, minilm_path
from ._history import format_call
from ._protocol import BaseMemory, SessionInfo, UserRef

Backend = Literal["auto", "embed", "bm25", "hashing"]


class UtteranceIndex:
    """A growing index of texts searched densely (an embedder) or lexically (BM25).

    Args:
        backend: ``embed`` (the shared embedder), ``hashing`` (the hashing embedder), ``bm25``.
    """

    def __init__(self, backend: Literal["embed", "bm25", "hashing"]) -> None:
        self.backend = backend
        self.texts: list[str] = []
        self._chunks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
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
        self._chunks.append(vectors[[rows[text] for text in texts]])
        self._matrix = None

    def _embedder(self) -> Any:
        return get_embedder("hashing" if self.backend == "hashing" else "auto")

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """(position, score) of the best ``k`` texts, best first."""
        if not self.texts or k <= 0:
            return []
        k = min(k, len(self.texts))
        if self.backend == "bm25":
            return self._search_bm25(query, k)
        if self._matrix is None:
            self._matrix = (
                np.concatenate(self._chunks) if len(self._chunks) > 1 else self._chunks[0]
            )
            self._chunks = [self._matrix]
        scores = self._matrix @ self._embedder().encode([query])[0]
        top = np.argpartition(scores, len(scores) - k)[-k:]
        top = top[np.argsort(-scores[top])]
        return [(int(i), float(scores[i])) for i in top]

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

    def __init__(
        self, models: ModelRoles, *, k: int = 6, backend: Backend = "auto", **options: Any
    ) -> None:
        super().__init__(models, **options)
        self.k = int(k)
        self.backend = resolve_backend(backend)
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
