"""The preferences a study's participants adopt, at the two granularities of
MultiSessionCollab's user study: ``domain`` preferences speak of one domain's work (its
single-domain coding study: a plan before code, alternatives, libraries justified, a naming
convention), ``general`` ones hold for any task (its mixed writing / maths / coding study:
a plan first, several approaches with their trade-offs, then asking which to take).
General preferences are rapport's collab taxonomy and the study's own general ones; domain
ones are package data here (``preferences.yaml``)."""

from __future__ import annotations

import functools
from collections.abc import Collection
from importlib import resources
from typing import Any, Literal

import yaml

from ..collab import Preference, Taxonomy, load_taxonomy

Granularity = Literal["general", "domain"]


@functools.cache
def _package_data() -> dict[str, Any]:
    text = (resources.files("rapport.envs.study") / "preferences.yaml").read_text(encoding="utf-8")
    raw: dict[str, Any] = yaml.safe_load(text)
    return raw


@functools.cache
def domain_taxonomies() -> dict[str, Taxonomy]:
    """Domain -> its scoped preferences (``preferences.yaml``)."""
    return {
        domain: Taxonomy([Preference.model_validate(p) for p in prefs], name=f"study-{domain}")
        for domain, prefs in _package_data()["domains"].items()
    }


@functools.cache
def general_taxonomy() -> Taxonomy:
    """The general preferences: rapport's collab taxonomy and the study's own
    (``preferences.yaml``'s ``general``)."""
    own = [Preference.model_validate(p) for p in _package_data().get("general", [])]
    return Taxonomy([*load_taxonomy("collab").preferences, *own], name="study-general")


def preference_pool(granularity: Granularity, domains: Collection[str]) -> Taxonomy:
    """The preferences a study type of this granularity may use, its problems being of
    these domains.

    Raises:
        ValueError: ``domain`` granularity over problems of several domains, or of a domain
            with no scoped preferences.
    """
    if granularity == "general":
        return general_taxonomy()
    if len(domains) != 1:
        raise ValueError(
            f"granularity domain needs the problems of one domain, not {', '.join(sorted(domains))}"
        )
    (domain,) = domains
    scoped = domain_taxonomies()
    if domain not in scoped:
        raise ValueError(
            f"no {domain} preferences for granularity domain (there are: {', '.join(scoped)})"
        )
    return scoped[domain]


def granularity_of(preference_id: str) -> str | None:
    """``general``, the domain a scoped preference belongs to, or None for an unknown id."""
    if preference_id in general_taxonomy():
        return "general"
    return next((d for d, t in domain_taxonomies().items() if preference_id in t), None)


def find_preference(preference_id: str) -> Preference:
    """A general or domain-scoped preference by id.

    Raises:
        KeyError: no such preference.
    """
    general = general_taxonomy()
    if preference_id in general:
        return general.get(preference_id)
    for taxonomy in domain_taxonomies().values():
        if preference_id in taxonomy:
            return taxonomy.get(preference_id)
    raise KeyError(f"unknown preference '{preference_id}'")
