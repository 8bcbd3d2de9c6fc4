"""``rapport cache info|clear``: the shared response cache."""

from __future__ import annotations

import argparse
import sqlite3

from rapport.store import SqliteCache

from ._errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cache`` command."""
    parser = subparsers.add_parser(
        "cache",
        help="show or clear the shared model response cache",
        description="info: where the cache is, its entries and size. clear: delete every "
        "entry (runs then call their models again).",
    )
    parser.add_argument("action", choices=("info", "clear"), help="what to do")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    cache = SqliteCache()
    cache.check(write=args.action == "clear")
    if not cache.path.exists():
        print(f"cache: {cache.path} (none yet: 0 entries)")
        return 0
    try:
        if args.action == "info":
            entries = len(cache)
            size = sum(
                p.stat().st_size
                for p in cache.path.parent.glob(cache.path.name + "*")
                if p.is_file()
            )
            print(f"cache: {cache.path}, {entries} entries, {size / 1e6:.1f} MB")
            return 0
        removed = cache.clear()
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot {args.action} the cache {cache.path}: {exc}") from exc
    finally:
        cache.close()
    print(f"cache: removed {removed} entries from {cache.path}")
    return 0
