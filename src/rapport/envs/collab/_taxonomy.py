"""Preference taxonomies: package data YAML files, loaded into typed `Preference` records."""

from __future__ import annotations

import functools
import random
from collections.abc import Collection, Iterable
from importlib import resources

import yaml
from pydantic import BaseModel, Field


class Preference(BaseModel):
    """One interaction preference a simulated user holds."""

    id: str
    category: str
    name: str
    description: str
    """What the simulated user is told about itself."""
    enforcement: str
    """The criterion the user applies when judging whether a reply honoured the preference."""
    conflicts: list[str] = Field(default_factory=list)
    """Ids of preferences that cannot be held together with this one."""
    checker: str | None = None
    """Name of the deterministic checker in `rapport.envs.collab.CHECKERS`, if code can decide."""


class TaxonomyError(ValueError):
    """A taxonomy file that is missing or inconsistent."""


class Taxonomy:
    """A set of preferences with their conflicts.

    Args:
        preferences: the preferences; ids must be unique and conflicts symmetric.
        name: the taxonomy's name.

    Raises:
        TaxonomyError: duplicate ids, unknown or asymmetric conflicts.
    """

    def __init__(self, preferences: list[Preference], name: str = "") -> None:
        self.name = name
        self.preferences = list(preferences)
        self._by_id = {p.id: p for p in self.preferences}
        if len(self._by_id) != len(self.preferences):
            raise TaxonomyError(f"taxonomy '{name}' has duplicate preference ids")
        self._check_conflicts()

    def _check_conflicts(self) -> None:
        for pref in self.preferences:
            for other in pref.conflicts:
                if other not in self._by_id:
                    raise TaxonomyError(f"'{pref.id}' conflicts with unknown '{other}'")
                if pref.id not in self._by_id[other].conflicts:
                    raise TaxonomyError(f"conflict '{pref.id}' -> '{other}' is not symmetric")

    def get(self, id: str) -> Preference:
        """The preference with this id.

        Raises:
            KeyError: no such preference.
        """
        if id not in self._by_id:
            raise KeyError(f"unknown preference '{id}' in taxonomy '{self.name}'")
        return self._by_id[id]

    def __contains__(self, id: object) -> bool:
        return id in self._by_id

    def categories(self) -> list[str]:
        """The categories, in order of first appearance."""
        return list(dict.fromkeys(p.category for p in self.preferences))

    def compatible(self, ids: Iterable[str]) -> bool:
        """Whether no two of these preferences conflict (unknown ids raise `KeyError`)."""
        chosen = list(dict.fromkeys(ids))
        return not any(
            other in chosen for pref_id in chosen for other in self.get(pref_id).conflicts
        )

    def sample_across_categories(
        self,
        rng: random.Random,
        k: int = 3,
        *,
        checkable_only: bool = False,
        within: Collection[str] | None = None,
    ) -> list[Preference]:
        """Draw `k` mutually compatible preferences from `k` different categories, as
        MultiSessionCollab's user profiles hold them.

        Args:
            rng: the random source (the draw depends only on its state).
            k: how many to draw.
            checkable_only: draw only preferences with a deterministic checker.
            within: draw only these ids; None: any.

        Raises:
            ValueError: no such draw exists.
        """
        pool = [
            p
            for p in self.preferences
            if (p.checker is not None or not checkable_only) and (within is None or p.id in within)
        ]
        by_category: dict[str, list[Preference]] = {}
        for pref in pool:
            by_category.setdefault(pref.category, []).append(pref)
        if len(by_category) >= k:
            for _attempt in range(200):
                categories = rng.sample(sorted(by_category), k)
                chosen = [rng.choice(by_category[c]) for c in categories]
                if self.compatible(p.id for p in chosen):
                    return chosen
        raise ValueError(f"cannot draw {k} compatible preferences from {k} categories")

    def sample(self, rng: random.Random, k: int = 3) -> list[Preference]:
        """Draw `k` mutually compatible preferences.

        Args:
            rng: the random source (the draw depends only on its state).
            k: how many to draw.

        Raises:
            ValueError: `k` compatible preferences cannot be found.
        """
        for _attempt in range(200):
            order = rng.sample(self.preferences, len(self.preferences))
            chosen: list[Preference] = []
            for pref in order:
                if self.compatible([*(c.id for c in chosen), pref.id]):
                    chosen.append(pref)
                if len(chosen) == k:
                    return chosen
        raise ValueError(f"cannot draw {k} compatible preferences from '{self.name}'")


@functools.cache
def load_taxonomy(name: str = "collab") -> Taxonomy:
    """Load a taxonomy shipped as package data (``data/<name>.yaml`` in this package).

    Raises:
        TaxonomyError: no such taxonomy, or its content is inconsistent.
    """
    resource = resources.files(__package__) / "data" / f"{name}.yaml"
    if not resource.is_file():
        raise TaxonomyError(f"unknown taxonomy '{name}'")
    raw = yaml.safe_load(resource.read_text(encoding="utf-8"))
    prefs = [Preference.model_validate(item) for item in raw.get("preferences", [])]
    return Taxonomy(prefs, name=name)
