"""Memory methods, registered lazily as ``module:attr``."""

from __future__ import annotations

from typing import Any

from rapport.llm import ModelRoles, load_entry

from ._protocol import Memory

MEMORIES: dict[str, str] = {
    "none": "rapport.memory._basic:NoMemory",
    "oracle": "rapport.memory._basic:OracleMemory",
    "reflection": "rapport.memory._reflection:ReflectionMemory",
    "full_history": "rapport.memory._history:FullHistoryMemory",
    "rag": "rapport.memory._rag:RagMemory",
    "facts": "rapport.memory._facts:FactsMemory",
    "prefine": "rapport.memory.prefine:PRefineMemory",
    "mem0": "rapport.memory._peers:Mem0Memory",
    "langmem": "rapport.memory._peers:LangMemMemory",
    "prime": "rapport.memory.prime:PrimeMemory",
    "reflexion": "rapport.memory._reflexion:ReflexionMemory",
    "react": "rapport.memory._react:ReActMemory",
}


class UnknownMemoryError(ValueError):
    """A memory name that is not registered."""


def create_memory(name: str, models: ModelRoles, **options: Any) -> Memory:
    """Build a registered memory method.

    Raises:
        UnknownMemoryError: the name is not registered.
    """
    if name not in MEMORIES:
        raise UnknownMemoryError(f"unknown memory '{name}' (known: {', '.join(sorted(MEMORIES))})")
    memory: Memory = load_entry(MEMORIES[name])(models, **options)
    return memory
