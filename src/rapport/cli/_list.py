"""``rapport list benchmarks|memories|models|presets``: what can be named, one line each."""

from __future__ import annotations

import argparse
import inspect
import textwrap
from collections.abc import Iterator
from typing import Any

from rapport.envs import BENCHMARKS, registered_presets
from rapport.llm import EMBEDDED_MODELS, PROVIDERS, load_entry, load_plugins
from rapport.memory import MEMORIES

from ._options_help import plain as _plain

_PROVIDER_SPECS = {
    "llamacpp": "llamacpp/NAME or llamacpp/PATH.gguf",
    "openai": "openai/MODEL (OPENAI_BASE_URL or base_url=URL)",
    "scripted": "scripted/echo, scripted/auto",
    "transformers": "transformers/PATH (a checkpoint folder)",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``list`` command."""
    parser = subparsers.add_parser(
        "list",
        help="list the benchmarks, memories, models or presets there are, plug-ins included",
        description="Names one line each, with what they are; installed plug-ins (entry "
        "points rapport.benchmarks, rapport.memories, rapport.providers, rapport.presets) "
        "are included.",
    )
    parser.add_argument(
        "what", choices=("benchmarks", "memories", "models", "presets"), help="what to list"
    )
    parser.add_argument(
        "--long",
        "-l",
        action="store_true",
        help="each description whole (its first paragraph), not its first sentence cut to "
        f"{SHORT} characters",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    lines = list(_LISTS[args.what](args.long))
    if not lines:
        print(f"no {args.what}")
    width = max((len(name) for name, _ in lines), default=0)
    if args.long:
        for name, text in lines:
            print(name)
            print(textwrap.fill(text, 100, initial_indent="    ", subsequent_indent="    "))
        return 0
    for name, text in lines:
        print(f"{name:<{width}}  {text}".rstrip())
    return 0


SHORT = 100
"""Characters of a description that the short listing shows."""


def describe(entry: Any, *, whole: bool = False) -> str:
    """A registered entry's docstring: its first paragraph `whole`, else its first sentence
    cut to `SHORT` characters; or why it cannot be loaded."""
    try:
        loaded = load_entry(entry)
    except Exception as exc:  # a plug-in that does not import must not hide the others
        return f"(cannot be loaded: {' '.join(str(exc).split())[:120]})"
    first = _plain((inspect.getdoc(loaded) or "").split("\n\n")[0])
    if whole:
        return first
    sentence = first.split(". ")[0].rstrip(".:")
    return sentence if len(sentence) <= SHORT else sentence[: SHORT - 1].rstrip() + "…"


def _benchmarks(whole: bool) -> Iterator[tuple[str, str]]:
    load_plugins("rapport.benchmarks", BENCHMARKS)
    for name, entry in BENCHMARKS.items():
        yield name, describe(entry, whole=whole)


def _memories(whole: bool) -> Iterator[tuple[str, str]]:
    load_plugins("rapport.memories", MEMORIES)
    for name, entry in MEMORIES.items():
        yield name, describe(entry, whole=whole)


def _models(whole: bool) -> Iterator[tuple[str, str]]:
    for model in EMBEDDED_MODELS.values():
        state = "joined" if model.path.is_file() else "not joined yet"
        yield model.spec, f"{model.title} (embedded, {state})"
    load_plugins("rapport.providers", PROVIDERS)
    for name, entry in PROVIDERS.items():
        yield f"{name}/...", _PROVIDER_SPECS.get(name) or describe(entry, whole=whole)


def _presets(whole: bool) -> Iterator[tuple[str, str]]:
    for name, entry in registered_presets().items():
        yield name, describe(entry, whole=whole)


_LISTS = {
    "benchmarks": _benchmarks,
    "memories": _memories,
    "models": _models,
    "presets": _presets,
}
