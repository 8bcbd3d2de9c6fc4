"""The everyday phrasings simulated users speak with (package data)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml


@cache
def phrasings() -> dict[str, object]:
    """The packaged templates (``openings``, ``answers``, ``lead_ins``, ``go_on``,
    ``closings`` and ``enforce`` per preference id)."""
    text = resources.files(__package__).joinpath("data/rule_phrasings.yaml").read_text()
    data: dict[str, object] = yaml.safe_load(text)
    return data


def phrase_list(key: str) -> list[str]:
    """One list of phrasings (``openings``, ``answers``, ``lead_ins``, ``go_on`` ...)."""
    value = phrasings()[key]
    assert isinstance(value, list)
    return [str(v) for v in value]


def enforcement_lines(pref_id: str) -> list[str]:
    """The ways the rule user asks for one preference."""
    table = phrasings()["enforce"]
    assert isinstance(table, dict)
    return [str(v) for v in table.get(pref_id, [])]
