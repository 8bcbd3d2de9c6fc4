"""String literals read out of Python source without running it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport._pysource import PySourceError, fstring_prefixes, parse, string_constants

SOURCE = """
import os
os.system("never run")
GREETING = "hello {name}"
COMPUTED = "a" + "b"
def add(self, messages):
    picked = self.pick()
    first = f"Use these:\\n{picked}" + messages[0]
    repr_ = f"Shown {picked!r}"
    spec = f"Padded {picked:>10}"
    later = f"{self.notes} then {picked}"
    return first
class Agent:
    async def add(self):
        return f"Method: {picked}"
"""


def _tree(tmp_path: Path, text: str = SOURCE) -> Path:
    path = tmp_path / "prompts.py"
    path.write_text(text, encoding="utf-8")
    return path


def test_module_level_literals_are_read_and_others_are_none(tmp_path: Path) -> None:
    constants = string_constants(parse(_tree(tmp_path)))
    assert constants["GREETING"] == "hello {name}"
    assert constants["COMPUTED"] is None
    assert "picked" not in constants  # not module level


def test_an_f_string_s_opening_text_before_the_named_value(tmp_path: Path) -> None:
    prefixes = fstring_prefixes(parse(_tree(tmp_path)), "add", "picked")
    assert prefixes == ["Use these:\n", "Method: "]  # conversions, specs, other names: skipped
    assert fstring_prefixes(parse(_tree(tmp_path)), "absent", "picked") == []


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"def broken(:\n", "not valid Python"), (b"\xff\xfe\x00", "cannot read")],
)
def test_an_unreadable_file_is_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "prompts.py"
    path.write_bytes(content)
    with pytest.raises(PySourceError, match=message) as info:
        parse(path)
    assert "\n" not in str(info.value)


def test_deep_nesting_is_refused_not_crashed(tmp_path: Path) -> None:
    path = _tree(tmp_path, "X = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n")
    with pytest.raises(PySourceError):
        parse(path)
