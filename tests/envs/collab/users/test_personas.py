"""Personas: generated from attribute lists, or loaded from Persona Hub style JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.envs.collab import (
    ATTRIBUTES,
    PersonaFileError,
    attribute_lists,
    generate_personas,
    load_personas_jsonl,
)


def test_every_attribute_list_has_at_least_30_distinct_values() -> None:
    lists = attribute_lists()
    for key in ATTRIBUTES:
        assert len(set(lists[key])) >= 30, key


def test_generated_personas_are_reproducible_and_varied() -> None:
    first = generate_personas(40, seed=3)
    assert first == generate_personas(40, seed=3)
    assert generate_personas(10, seed=3) == first[:10]
    assert first != generate_personas(40, seed=4)
    assert len({p.description for p in first}) >= 35
    persona = first[0]
    assert persona.name in persona.description and persona.profession in persona.description


def test_load_jsonl_accepts_the_usual_keys(tmp_path: Path) -> None:
    path = tmp_path / "personas.jsonl"
    lines = [
        {"persona": "A retired sailor who loves knots."},
        {"input persona": "A nurse who reads crime novels."},
        {"text": "A student of Norse history."},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    personas = load_personas_jsonl(path)
    assert [p.description for p in personas] == [
        "A retired sailor who loves knots.",
        "A nurse who reads crime novels.",
        "A student of Norse history.",
    ]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"persona": "ok"}\nnot json\n', ":2: not valid JSON"),
        ('["a list"]\n', ":1: expected a JSON object"),
        ('{"name": "no persona key"}\n', ":1: no non-empty string"),
        ("\n\n", "holds no persona"),
        ("[" * 100_000 + "]" * 100_000 + "\n", ":1: JSON nested too deeply"),
        ('{"persona": ' + "9" * 5000 + "}\n", ":1: not valid JSON"),
    ],
)
def test_bad_jsonl_names_the_file_and_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(PersonaFileError, match=expected) as info:
        load_personas_jsonl(path)
    assert "bad.jsonl" in str(info.value)


def test_missing_file_is_a_persona_file_error(tmp_path: Path) -> None:
    with pytest.raises(PersonaFileError, match="cannot read"):
        load_personas_jsonl(tmp_path / "absent.jsonl")


def test_a_byte_order_mark_is_read_as_utf_8(tmp_path: Path) -> None:
    path = tmp_path / "personas.jsonl"
    path.write_text('\ufeff{"persona": "A baker."}\n', encoding="utf-8")
    assert [p.description for p in load_personas_jsonl(path)] == ["A baker."]
