"""The one helper that turns an exception, a pydantic error included, into one plain line."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rapport._errors import error_line


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    users: int = Field(ge=1)
    name: str
    a: int = 0
    b: int = 0
    c: int = 0


def _error(data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Settings.model_validate(data)
    return caught.value


def test_a_validation_error_reads_where_and_what_without_library_wording() -> None:
    line = error_line(_error({"users": 0, "name": "x", "userz": 2}))
    assert line == "users: Input should be greater than or equal to 1; userz: unknown name"
    assert error_line(_error({"users": 1}), title=True) == "Settings: name: required"


def test_many_problems_are_counted_and_the_line_is_bounded() -> None:
    bad = {"users": 0, "a": "x", "b": "y", "c": "z"}
    line = error_line(_error(bad))
    assert line.endswith("(and 1 more)") and line.count(";") == 3
    assert len(error_line(RuntimeError("word " * 200), limit=50)) == 50
    assert error_line(RuntimeError("two\nlines  here")) == "two lines here"
    assert error_line(RuntimeError()) == "RuntimeError"
