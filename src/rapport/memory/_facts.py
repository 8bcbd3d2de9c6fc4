"""`facts`: a Mem0-style fact memory.

After each session the ``memory`` model extracts short facts about the user; each is compared
with the most similar stored facts, and one decision call assigns ADD / UPDATE / DELETE / NOOP.
Code applies the operations and ignores any that name an unknown fact.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, ModelError, ModelRoles
from rapport.log import MemoryItem, Provenance, SessionRecord, render_session

from ._embed import embedder_name, get_embedder
from ._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef

FACT_CHARS = 200
"""The longest fact kept (a longer one is asked for again, as any invalid output)."""


class ExtractedFacts(BaseModel):
    """Facts about the user found in one session."""

    facts: list[Annotated[str, Field(max_length=FACT_CHARS)]] = Field(
        default_factory=list, max_length=8
    )


class FactOperation(BaseModel):
    """One decision about a new fact."""

    event: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    id: str = Field(default="", max_length=12)
    """The stored fact it concerns (UPDATE, DELETE, NOOP)."""
    text: str = Field(default="", max_length=FACT_CHARS)
    """The fact's text (ADD, UPDATE)."""


class FactOperations(BaseModel):
    """The decisions for a batch of new facts."""

    operations: list[FactOperation] = Field(default_factory=list, max_length=12)


@lru_cache(maxsize=4)
def _prompt(name: str) -> str:
    return (resources.files("rapport.memory") / "prompts" / f"{name}.md").read_text("utf-8")


def apply_operations(
    items: list[MemoryItem], operations: list[FactOperation], session: int, next_id: int
) -> tuple[list[MemoryItem], int, int]:
    """Apply ADD/UPDATE/DELETE/NOOP to a fact list.

    Returns:
        The new list, the next free id number, and how many operations were ignored
        (an unknown id, or an empty text to add).
    """
    by_id = {item.id: item for item in items}
    ignored = 0
    for op in operations:
        target = by_id.get(op.id)
        if op.event == "ADD" and op.text.strip():
            new = MemoryItem(
                id=f"f{next_id}", text=op.text.strip(), provenance=[Provenance(session=session)]
            )
            by_id[new.id] = new
            next_id += 1
        elif op.event == "UPDATE" and target is not None and op.text.strip():
            by_id[op.id] = target.model_copy(
                update={
                    "text": op.text.strip(),
                    "provenance": [*target.provenance, Provenance(session=session)],
                }
            )
        elif op.event == "DELETE" and target is not None:
            del by_id[op.id]
        elif op.event == "NOOP" and (target is not None or not op.id):
            continue
        else:
            ignored += 1
    return list(by_id.values()), next_id, ignored


class FactsMemory(BaseMemory):
    """Extract facts, reconcile them with similar stored facts, list them at session start.

    Args:
        models: the ``memory`` role extracts and decides.
        similar: how many stored facts each new fact is compared with.
        max_facts: the most facts shown in the context.
        embedder: the embedder for similarity (``auto`` or ``hashing``).
    """

    name = "facts"

    class Options(MemoryOptions):
        similar: int = Field(default=3, ge=1)
        """How many stored facts each new fact is compared with."""
        max_facts: int = Field(default=30, ge=1)
        """The most facts shown in the context."""
        embedder: Literal["auto", "minilm", "hashing"] = "auto"
        """The embedder for similarity."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self.similar = self.options.similar
        self.max_facts = self.options.max_facts
        self.embedder = self.options.embedder

    def describe(self) -> str:
        return embedder_name(self.embedder)

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        items = self.state(user).items[-self.max_facts :]
        return "\n".join(f"- {item.text}" for item in items)

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        state = self.state(user)
        try:
            facts = await self._extract(record)
            if not facts:
                return
            if state.items:
                ops = await self._decide(state.items, facts)
            else:  # nothing to compare against: code adds them without a model call
                ops = [FactOperation(event="ADD", text=f) for f in facts]
        except ModelError as exc:
            state.data["failures"] = int(state.data.get("failures", 0)) + 1
            state.data["last_error"] = str(exc)[:300]
            return
        items, next_id, ignored = apply_operations(
            state.items, ops, record.index, int(state.data.get("next_id", 0))
        )
        state.items = items
        state.data["next_id"] = next_id
        state.data["ignored_operations"] = int(state.data.get("ignored_operations", 0)) + ignored

    async def _extract(self, record: SessionRecord) -> list[str]:
        prompt = _prompt("facts_extract").format(transcript=render_session(record))
        out = await self.models.get("memory").generate(
            [Message(role="user", content=prompt)],
            schema=ExtractedFacts,
            config=GenerateConfig(max_tokens=300),
        )
        return [f.strip() for f in out.parsed.facts if f.strip()]

    def _neighbours(self, items: list[MemoryItem], facts: list[str]) -> list[MemoryItem]:
        embedder = get_embedder(self.embedder)
        stored = embedder.encode([item.text for item in items])
        sims = embedder.encode(facts) @ stored.T
        keep: set[int] = set()
        for row in sims:
            keep.update(int(i) for i in np.argsort(-row)[: self.similar])
        return [items[i] for i in sorted(keep)]

    async def _decide(self, items: list[MemoryItem], facts: list[str]) -> list[FactOperation]:
        near = self._neighbours(items, facts)
        prompt = _prompt("facts_update").format(
            existing="\n".join(f"{item.id}: {item.text}" for item in near),
            new="\n".join(f"- {fact}" for fact in facts),
        )
        out = await self.models.get("memory").generate(
            [Message(role="user", content=prompt)],
            schema=FactOperations,
            config=GenerateConfig(max_tokens=400),
        )
        operations: list[FactOperation] = out.parsed.operations
        return operations
