"""The `rapport` command. One module per command; each calls only the public Python API.

A command module exposes ``register(subparsers)``, which adds its parser and sets
``handler=fn(args) -> int`` on it. Importing this package is light: everything else is
imported inside `main`, after Ctrl-C and SIGTERM are handled (`_signals`).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ._signals import run_stoppable

if TYPE_CHECKING:
    from ._errors import UsageError

DISTRIBUTION = "rapport-toolkit"
"""rapport's name on PyPI (``pip install rapport-toolkit``; ``rapport`` there is another
project's); the import name and the command are ``rapport``."""

COMMANDS: dict[str, str] = {
    "run": "rapport.cli._run",
    "resume": "rapport.cli._resume",
    "report": "rapport.cli._report",
    "compare": "rapport.cli._compare",
    "view": "rapport.cli._view",
    "export": "rapport.cli._export",
    "demo": "rapport.cli._demo",
    "models": "rapport.cli._models",
    "list": "rapport.cli._list",
    "serve-model": "rapport.cli._serve",
    "serve-memory": "rapport.cli._serve_memory",
    "library": "rapport.cli._library",
    "train": "rapport.cli._train",
    "cache": "rapport.cli._cache",
    "study": "rapport.cli._study",
    "pack": "rapport.cli._pack",
    "protocol": "rapport.cli._protocol",
}


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (``rapport: COMMAND: ...``) and exit 2, like every bad
    input; an unknown option names the nearest known one."""

    def error(self, message: str) -> NoReturn:
        # A type= check that names its flag (`whole_number`) needs no "argument --port: " too.
        message = re.sub(r"^argument (\S+): (?=\1 )", "", message)
        command = self.prog.removeprefix("rapport").strip()
        self.exit(2, f"rapport: {command + ': ' if command else ''}{message}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            from ._names import unknown_flag

            command = self._command(parsed)
            known = [f for a in command._actions for f in a.option_strings]
            first = extra[0]
            reason = (
                unknown_flag(first.partition("=")[0], known)
                if first.startswith("-")
                else f"unexpected argument '{first}'"
            )
            command.error(reason)
        return parsed

    def _command(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The parser of the command that was named (this one when there is none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, "command", None) or "")
                return chosen if isinstance(chosen, argparse.ArgumentParser) else self
        return self


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (command modules that are absent are skipped)."""
    from rapport import __version__

    parser = _Parser(prog="rapport", description="Agents that learn how each person likes to work.")
    parser.add_argument(
        "--version", action="version", version=f"rapport {__version__} ({DISTRIBUTION})"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, dispatch, and turn bad input into one line and exit code 2;
    Ctrl-C (SIGINT) or SIGTERM, from this function's first statement on, into one line and
    exit code 130 or 143 (see `_signals`)."""
    return run_stoppable(lambda: _dispatch(argv))


def _dispatch(argv: list[str] | None) -> int:
    from rapport.store import StoreError

    from ._errors import UsageError

    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (UsageError, StoreError) as exc:
        print(f"rapport: {exc}", file=sys.stderr)
        return 2


def __getattr__(name: str) -> Any:
    """`UsageError`, imported on first use (so that importing the package stays light)."""
    if name == "UsageError":
        from ._errors import UsageError

        return UsageError
    raise AttributeError(f"module 'rapport.cli' has no attribute '{name}'")


__all__ = ["COMMANDS", "DISTRIBUTION", "UsageError", "build_parser", "main"]
