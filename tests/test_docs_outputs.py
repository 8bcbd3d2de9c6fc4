"""Every code block of the docs whose output the docs print runs here, and what it prints
must be what the docs show: a changed output fails until the page is changed with it.

In a page that prints outputs, blocks run in order in one empty working directory:

- a plain block of ``rapport run ...`` commands (``\\`` continuations allowed) makes the runs
  the page reads;
- a ``python`` block followed by a plain block of output runs (one namespace per page) and
  must print that block; a ``python`` block with no printed output below it (a plot, a file
  to save) is not run;
- a plain block of ``$ rapport ...`` lines runs each command and must print the lines below
  it, where a line ``...`` stands for any lines.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from rapport.cli import main

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Block:
    """One fenced block of a page."""

    line: int
    lang: str
    text: str

    def commands(self, prompt: str = "") -> list[str]:
        """The ``rapport`` commands in the block (joined over ``\\``), after `prompt`."""
        found: list[str] = []
        pending = ""
        for raw in self.text.splitlines():
            line = pending + " " + raw.strip() if pending else raw.strip()
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1].rstrip()
            elif line.startswith(prompt + "rapport "):
                found.append(line.removeprefix(prompt))
        return found


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks, in order."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    start, lang, body = 0, "", []
    inside = False
    for number, line in enumerate(lines, 1):
        match = _FENCE.match(line)
        if match and not inside:
            inside, start, lang, body = True, number, match.group(1), []
        elif line.startswith("```") and inside:
            inside = False
            found.append(Block(start, lang, "\n".join(body)))
        elif inside:
            body.append(line)
    return found


def _is_setup(block: Block) -> bool:
    lines = [line for line in block.text.splitlines() if line.strip()]
    return (
        bool(lines)
        and not block.lang
        and all(c.startswith("rapport run ") for c in block.commands())
        and lines[0].startswith("rapport run ")
    )


def _is_output(block: Block) -> bool:
    """A plain block that is not commands to type (those follow a file to save, say)."""
    return not block.lang and not block.commands() and not _is_session(block)


def _is_session(block: Block) -> bool:
    return not block.lang and block.text.startswith("$ rapport ")


def steps(page: Path) -> list[tuple[Block, Block | None]]:
    """(block, its printed output) for each block a page runs; setup blocks have none."""
    found: list[tuple[Block, Block | None]] = []
    items = blocks(page)
    for i, block in enumerate(items):
        after = items[i + 1] if i + 1 < len(items) else None
        if _is_setup(block) or _is_session(block):
            found.append((block, None))
        elif block.lang == "python" and after is not None and _is_output(after):
            found.append((block, after))
    return found


PAGES = [
    p
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    if any(out is not None or _is_session(b) for b, out in steps(p))
]


def _matches(expected: list[str], printed: list[str]) -> bool:
    """Whether `printed` is `expected`, a line ``...`` standing for any lines."""
    pattern = "\n".join(".*?" if line == "..." else re.escape(line) for line in expected)
    return re.fullmatch(pattern, "\n".join(printed), re.DOTALL) is not None


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _run_session(block: Block, capsys: pytest.CaptureFixture[str]) -> None:
    chunks = re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]
    for chunk in chunks:
        command, _, expected = chunk.partition("\n")
        capsys.readouterr()
        assert main(shlex.split(command)[1:]) == 0, command
        printed = _lines(capsys.readouterr().out)
        assert _matches(_lines(expected), printed), (
            f"line {block.line}: $ {command} printed\n" + "\n".join(printed)
        )


def test_pages_with_printed_outputs_are_found() -> None:
    names = {p.name for p in PAGES}
    assert {"analysis.md", "viewing.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_a_page_prints_what_it_shows(
    page: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block, output in steps(page):
        if _is_setup(block):
            for command in block.commands():
                assert main([*shlex.split(command)[1:], "--no-progress"]) == 0, command
        elif _is_session(block):
            _run_session(block, capsys)
        else:
            assert output is not None
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block.text, f"{page.name}:{block.line}", "exec"), namespace)
            assert _lines(printed.getvalue()) == _lines(output.text), (
                f"{page.name}:{block.line} printed\n{printed.getvalue()}"
            )
