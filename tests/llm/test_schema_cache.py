"""Structured calls reuse one JSON schema per pydantic class."""

from __future__ import annotations

from pydantic import BaseModel

from rapport.llm._model import json_schema_of


class Reply(BaseModel):
    text: str


def test_the_schema_is_built_once_per_class() -> None:
    assert json_schema_of(Reply) is json_schema_of(Reply)
    assert json_schema_of(Reply) == Reply.model_json_schema()
