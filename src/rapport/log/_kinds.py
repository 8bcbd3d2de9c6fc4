"""Registries of typed records keyed by ``kind``: tasks, outcomes and events.

A record type registers itself when its class is defined (a subclass of `BaseTask`,
`BaseOutcome` or `BaseEvent` whose ``kind`` has a string default), so a benchmark or a
plug-in adds its own kinds without editing a list here. Reading a record back looks its
kind up; a kind whose module has not been imported yet is looked for by the loader that
the benchmark registry installs (`set_kind_loader`), and a kind nobody registered becomes
the family's fallback type, which keeps every field it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_loader: Callable[[], None] | None = None
_loaded = False


def set_kind_loader(loader: Callable[[], None]) -> None:
    """Install the function that imports every registered benchmark (called once, the
    first time a kind is not found)."""
    global _loader, _loaded
    _loader, _loaded = loader, False


def _load_all() -> None:
    global _loaded
    if _loader is not None and not _loaded:
        _loaded = True
        _loader()


class KindRegistry(Generic[M]):
    """The types of one family of records, by ``kind``."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._kinds: dict[str, type[M]] = {}
        self.fallback: type[M] | None = None

    def add(self, cls: type[M]) -> None:
        """Register a type under the default of its ``kind`` field.

        Raises:
            ValueError: another type already holds that kind.
        """
        field = cls.model_fields.get("kind")
        kind = field.default if field is not None else None
        if not isinstance(kind, str):
            return
        known = self._kinds.get(kind)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise ValueError(f"{self.family} kind '{kind}' is taken by {known.__qualname__}")
        self._kinds[kind] = cls

    def get(self, kind: str) -> type[M] | None:
        """The type registered for a kind (None: none is)."""
        if kind not in self._kinds:
            _load_all()
        return self._kinds.get(kind)

    def kinds(self) -> list[str]:
        """Every registered kind, sorted."""
        return sorted(self._kinds)

    def parse(self, value: Any) -> Any:
        """A record of this family from its JSON form (instances pass through)."""
        if not isinstance(value, dict):
            return value
        kind = value.get("kind")
        cls = self.get(kind) if isinstance(kind, str) else None
        cls = cls or self.fallback
        return value if cls is None else cls.model_validate(value)
