"""docs/gyms.md's table of differences is `rapport protocol gym`'s output for the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main

DOCS = Path(__file__).resolve().parents[3] / "docs" / "gyms.md"
MARKER = "<!-- protocol: gym -->"


def _table_after_marker(text: str) -> str:
    rest = text[text.index(MARKER) + len(MARKER) :].lstrip("\n").splitlines()
    lines = []
    for line in rest:
        if not line.startswith("|"):
            break
        lines.append(line)
    return "\n".join(lines)


def test_the_docs_table_is_the_protocol_of_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["protocol", "gym", "--format", "markdown"]) in (0, None)
    printed = capsys.readouterr().out.strip()
    assert _table_after_marker(DOCS.read_text(encoding="utf-8")) == printed
