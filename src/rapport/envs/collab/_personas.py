"""Personas: who a simulated user is, generated from attribute lists or loaded from JSONL."""

from __future__ import annotations

import json
import random
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from rapport._json import loads_strict

ATTRIBUTES = ("name", "profession", "expertise", "temperament", "background")
"""The attribute lists a generated persona draws one value from each."""

_JSONL_KEYS = ("persona", "input persona", "text")


class PersonaFileError(ValueError):
    """A persona file that is missing, unreadable or not in a known layout."""


class Persona(BaseModel):
    """Who a simulated user is. Loaded personas carry only `description`."""

    description: str
    """The text the user simulator reads."""
    name: str = ""
    profession: str = ""
    expertise: str = ""
    temperament: str = ""
    background: str = ""


@cache
def attribute_lists() -> dict[str, tuple[str, ...]]:
    """The packaged attribute lists (``name``, ``profession``, ``expertise`` ...)."""
    text = resources.files(__package__).joinpath("data/persona_attributes.yaml").read_text()
    raw = yaml.safe_load(text)
    return {key: tuple(str(v) for v in raw[key]) for key in ATTRIBUTES}


def generate_persona(rng: random.Random) -> Persona:
    """One persona drawn from the attribute lists with `rng`."""
    lists = attribute_lists()
    values = {key: rng.choice(lists[key]) for key in ATTRIBUTES}
    description = (
        f"{values['name']}, {_article(values['profession'])} {values['profession']}; "
        f"{values['expertise']}. "
        f"Temperament: {values['temperament']}. {values['background']}"
    )
    return Persona(description=description, **values)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def generate_personas(n: int, seed: int) -> list[Persona]:
    """`n` personas; the same seed always gives the same personas, the i-th independent of n."""
    return [generate_persona(random.Random(f"persona:{seed}:{i}")) for i in range(n)]


def load_personas_jsonl(path: str | Path) -> list[Persona]:
    """Read Persona Hub style JSONL: one object a line with ``persona``, ``input persona`` or
    ``text``.

    Raises:
        PersonaFileError: the file is missing, a line is not a JSON object with one of those
            keys, or the file holds no persona.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PersonaFileError(f"cannot read persona file {path}: {exc}") from exc
    personas = [
        Persona(description=_persona_text(line, path, number))
        for number, line in enumerate(lines, start=1)
        if line.strip()
    ]
    if not personas:
        raise PersonaFileError(f"persona file {path} holds no persona")
    return personas


def _persona_text(line: str, path: Path, number: int) -> str:
    try:
        item: Any = loads_strict(line)
    except json.JSONDecodeError as exc:
        raise PersonaFileError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
    except ValueError as exc:  # an integer of more digits than Python reads
        raise PersonaFileError(f"{path}:{number}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise PersonaFileError(f"{path}:{number}: JSON nested too deeply") from None
    if not isinstance(item, dict):
        raise PersonaFileError(f"{path}:{number}: expected a JSON object")
    for key in _JSONL_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    keys = ", ".join(repr(k) for k in _JSONL_KEYS)
    raise PersonaFileError(f"{path}:{number}: no non-empty string under {keys}")
