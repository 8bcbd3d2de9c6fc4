"""Every ``rapport ...`` command in README.md and docs/*.md parses against the real CLI: the
argument parser, and for ``run`` the benchmark's own options (nothing is run).

Commands come from code blocks (``$`` prompts, ``\\`` continuations and ``#`` comments
allowed) and from inline code. A synopsis is read as one of its instances: an optional
``[...]`` part is kept, ``a|b`` is its first choice, ``...`` is dropped and a placeholder
(``RUN_DIR``, ``N``, ``SPEC``) becomes a value of its kind. Inline code may name a command
without its required arguments (`rapport report` in prose); a code block may not. A
``--config`` file that the repository does not hold (one a page writes out) is left out.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from rapport.cli import build_parser
from rapport.cli._config import config_from_args
from rapport.cli._names import options_model

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDERS = {
    "BENCHMARK": "collab",
    "NAME": "collab",
    "RUN_DIR": "runs/x",
    "DIR": "runs/x",
    "N": "2",
    "R": "2",
    "K": "2",
    "SPEC": "scripted/auto",
    "ROLE=SPEC": "all=scripted/auto",
    "FILE": "x.yaml",
}
_FENCE = re.compile(r"^\s*```")
_INLINE = re.compile(r"`(rapport [^`]+)`")


def doc_commands() -> list[tuple[str, str, str]]:
    """(where, kind, command) for every ``rapport ...`` command in the docs; kind is
    ``block`` or ``inline``."""
    found: list[tuple[str, str, str]] = []
    for path in DOCS:
        where, in_block, pending = path.relative_to(ROOT), False, ""
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            at = f"{where}:{number}"
            if _FENCE.match(line):
                in_block = not in_block
            elif not in_block:
                found += [(at, "inline", m) for m in _INLINE.findall(line)]
            else:
                text = pending + " " + line.strip() if pending else line.strip().removeprefix("$ ")
                pending = ""
                if text.startswith("rapport ") and text.endswith("\\"):
                    pending = text[:-1].rstrip()
                elif text.startswith("rapport "):
                    found.append((at, "block", text))
    return found


def instance(command: str) -> list[str]:
    """The arguments of one instance of a command or synopsis (without ``rapport``)."""
    words: list[str] = []
    for word in shlex.split(command.replace("[", " ").replace("]", " "), comments=True)[1:]:
        if word in ("...", "") or word.endswith("..."):
            continue
        word = word.split("|")[0] if "|" in word and "=" not in word else word
        words.append(PLACEHOLDERS.get(word, word))
    if words[:1] == ["run"] and "--config" in words[:-1]:
        at = words.index("--config")
        if words[at + 1].endswith((".yaml", ".yml")) and not (ROOT / words[at + 1]).is_file():
            del words[at : at + 2]
    return words


def parse(argv: list[str]) -> None:
    """Parse as ``rapport`` does; a ``run`` also builds its config and checks the
    benchmark's options against its options model.

    Raises:
        SystemExit: argparse refused it (code 2).
        rapport.cli.UsageError: the config or an option is refused.
    """
    args: argparse.Namespace = build_parser().parse_args(argv)
    if args.command != "run":
        return
    config = config_from_args(args)
    model = options_model(config.benchmark)
    if model is not None:
        model.model_validate(config.options)


COMMANDS = doc_commands()


def test_the_docs_hold_commands_to_check() -> None:
    kinds = {kind for _, kind, _ in COMMANDS}
    assert len(COMMANDS) > 50 and kinds == {"block", "inline"}
    assert any("run mpt" in c for _, _, c in COMMANDS)


@pytest.mark.parametrize(("where", "kind", "command"), COMMANDS, ids=[w for w, _, _ in COMMANDS])
def test_a_documented_command_parses(
    where: str, kind: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        parse(instance(command))
    except SystemExit as exc:
        err = capsys.readouterr().err
        if kind == "inline" and "the following arguments are required" in err:
            return  # a command named in prose
        assert exc.code == 0, f"{where}: {command}\n{err}"
