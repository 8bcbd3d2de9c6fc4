"""Memory methods, registered lazily as ``module:attr``."""

from __future__ import annotations

from typing import Any

from rapport.llm import ModelRoles, load_entry, load_plugins

from ._protocol import Memory

MEMORIES: dict[str, Any] = {
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
    # A running `rapport serve-memory`, over HTTP.
    "service": "rapport.service._client:ServiceMemory",
}


class UnknownMemoryError(ValueError):
    """A memory name that is not registered."""


def create_memory(name: str, models: ModelRoles, **options: Any) -> Memory:
    """Build a registered memory method.

    Raises:
        UnknownMemoryError: the name is not registered.
    """
    if not is_memory(name):
        raise UnknownMemoryError(f"unknown memory '{name}' (known: {', '.join(sorted(MEMORIES))})")
    try:
        cls = load_entry(MEMORIES.get(name, name))
    except ImportError as exc:
        raise UnknownMemoryError(f"memory '{name}' cannot be loaded: {exc}") from exc
    memory: Memory = cls(models, **options)
    return memory


def memory_roles(name: str) -> tuple[str, ...] | None:
    """The model roles a memory method asks for (None: not said, or not loadable).

    Raises:
        UnknownMemoryError: the name is not registered.
    """
    if not is_memory(name):
        raise UnknownMemoryError(f"unknown memory '{name}' (known: {', '.join(sorted(MEMORIES))})")
    try:
        cls = load_entry(MEMORIES.get(name, name))
    except ImportError:
        return None
    roles = getattr(cls, "roles", None)
    return tuple(roles) if roles is not None else None


def is_memory(name: str) -> bool:
    """Whether a name is a memory: registered, from an installed plug-in (entry point group
    ``rapport.memories``), or a ``package.module:Class`` path."""
    if name not in MEMORIES:
        load_plugins("rapport.memories", MEMORIES)
    return name in MEMORIES or ":" in name


def register_memory(name: str, memory: Any) -> None:
    """Register a memory method under ``name``: a class taking ``(models, **options)``
    (e.g. a `BaseMemory` subclass), or its ``module:Class``."""
    MEMORIES[name] = memory
