"""``rapport library show|export DIR``: read or export a run's PRIME experience library."""

from __future__ import annotations

import argparse
from pathlib import Path

from rapport.memory.prime import ExperienceLibrary, library_from_state
from rapport.store import RUN_FILE, RunStore

from ._errors import UsageError, directory_path, output_file, reading_stores


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``library`` command."""
    parser = subparsers.add_parser(
        "library",
        help="show or export the experience library a PRIME run built",
        description="Print the newest experience library of a run's PRIME condition "
        "(show), or write it as Markdown or JSON (export).",
    )
    parser.add_argument("action", choices=("show", "export"), help="show or export")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run dir")
    parser.add_argument("--condition", default="prime", help="the condition (default: prime)")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="output format")
    parser.add_argument("--out", metavar="FILE", help="write here instead of printing")
    parser.set_defaults(handler=handle)


def newest_library(run_dir: str | Path, condition: str) -> ExperienceLibrary:
    """The highest-version library stored for a condition (shared by its users).

    Raises:
        UsageError: no run in the dir, or no library for the condition.
    """
    if not (Path(run_dir) / RUN_FILE).exists():
        raise UsageError(f"no run in '{run_dir}' ({RUN_FILE} not found)")
    try:
        with reading_stores(Path(run_dir)), RunStore.open_readonly(run_dir) as store:
            versions = store.memory_versions(condition=condition)
    except FileNotFoundError as exc:  # an empty run.sqlite: a lock made it, nothing stored
        raise UsageError(str(exc)) from exc
    libraries = [library_from_state(v.state) for v in versions if "library" in v.state.data]
    if not libraries:
        raise UsageError(f"no experience library for condition '{condition}' in '{run_dir}'")
    return max(libraries, key=lambda lib: (lib.version, len(lib.experiences)))


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    out = output_file("--out", args.out) if args.out is not None else None
    library = newest_library(directory_path("RUN_DIR", args.run_dir), args.condition)
    text = library.to_json() if args.format == "json" else library.to_markdown()
    if out is not None:
        try:
            out.write_text(text, "utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from exc
        print(f"wrote {args.out} ({len(library.active())} experiences, version {library.version})")
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0
