"""``rapport protocol BENCHMARK``: each setting the benchmark's paper fixes, beside ours."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rapport.envs import ProtocolRow, UnknownBenchmarkError, benchmark_class, protocol_rows

from ._config import add_experiment_flags, config_from_args
from ._errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``protocol`` command."""
    parser = subparsers.add_parser(
        "protocol",
        help="each setting the benchmark's paper fixes: the paper's value and source, ours",
        description="Print, setting by setting, what the benchmark's paper fixes (its value "
        "and the section, table or code file that fixes it), rapport's value for the "
        "defaults or for the config and flags given, the option that sets it, and whether "
        "the two are the same. Exit 0 either way.",
        allow_abbrev=False,
    )
    parser.add_argument("benchmark", metavar="BENCHMARK", help="a benchmark (rapport list)")
    parser.add_argument(
        "--format", choices=("table", "json", "markdown"), default="table", help="output form"
    )
    add_experiment_flags(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    try:
        cls = benchmark_class(args.benchmark)
    except UnknownBenchmarkError as exc:
        raise UsageError(str(exc)) from exc
    rows = protocol_rows(cls, config_from_args(args))
    if not rows:
        raise UsageError(f"benchmark '{args.benchmark}' declares no paper protocol")
    if args.format == "json":
        print(json.dumps([row.as_dict() for row in rows], indent=2, default=str))
    elif args.format == "markdown":
        print(markdown(rows))
    else:
        print(table(rows))
    return 0


def shown(value: Any) -> str:
    """A value on one line, as a person reads it."""
    if isinstance(value, str):
        text = value
    elif value is None:
        text = "-"
    else:
        text = json.dumps(value, default=str)
    return " ".join(text.split())


def _cells(row: ProtocolRow) -> list[str]:
    d = row.as_dict()
    same = "same" if row.same else "differs"
    return [
        d["setting"],
        shown(d["paper"]),
        d["source"],
        shown(d["ours"]),
        d["option"],
        same,
        d["note"],
    ]


_HEAD = ["setting", "paper", "source", "ours", "option", "", "note"]


def markdown(rows: list[ProtocolRow]) -> str:
    """The rows as a Markdown table (what docs' tables of differences are tested against)."""
    lines = ["| " + " | ".join([*_HEAD[:5], "same?", "note"]) + " |", "|" + "---|" * 7]
    for row in rows:
        cells = [c.replace("|", "\\|") for c in _cells(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(rows: list[ProtocolRow]) -> str:
    """The rows as aligned text, the note on a line of its own under a differing row."""
    body = [_cells(row)[:6] for row in rows]
    widths = [max(len(r[i]) for r in [_HEAD[:6], *body]) for i in range(6)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEAD[:6], widths, strict=True)).rstrip()]
    for row, cells in zip(rows, body, strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        if row.setting.note:
            lines.append("    " + row.setting.note)
    same = sum(row.same for row in rows)
    lines.append(f"{same} of {len(rows)} settings as the paper")
    return "\n".join(lines)
