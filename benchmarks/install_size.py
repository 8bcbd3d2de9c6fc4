"""Installed size of rapport's core dependencies and of what each extra adds, measured from
the distributions installed in the running environment (their RECORD files); prints JSON.

Run it in an environment with every extra installed; a package an extra needs that is not
installed is listed under ``missing``.

    python benchmarks/install_size.py
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
from collections.abc import Iterable

from packaging.requirements import Requirement


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _size(dist: md.Distribution) -> int:
    total = 0
    for file in dist.files or []:
        try:
            total += os.path.getsize(dist.locate_file(file))
        except OSError:
            continue
    return total


def _closure(requirements: Iterable[str], extras: set[str]) -> tuple[set[str], set[str]]:
    """The distributions the requirements pull in (transitively), and those not installed."""
    found: set[str] = set()
    missing: set[str] = set()
    todo = [(Requirement(r), extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        if req.marker is not None and not any(
            req.marker.evaluate({"extra": e}) for e in (wanted or {""})
        ):
            continue
        name = _name(req.name)
        if name in found or name in missing:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            missing.add(name)
            continue
        found.add(name)
        todo += [(Requirement(r), set(req.extras)) for r in dist.requires or []]
    return found, missing


def main() -> None:
    """Print the sizes."""
    rapport = md.distribution("rapport")
    requires = rapport.requires or []
    core = [r for r in requires if "extra ==" not in r]
    core_set, _ = _closure(core, set())
    sizes = {_name(d.metadata["Name"]): _size(d) for d in md.distributions()}
    extras = sorted(set(rapport.metadata.get_all("Provides-Extra") or []))
    report: dict[str, object] = {
        "core": {
            "packages": len(core_set),
            "mb": round(sum(sizes.get(n, 0) for n in core_set) / 1e6, 1),
            "largest": _largest(core_set, sizes),
        }
    }
    for extra in extras:
        pulled, missing = _closure([r for r in requires if f'extra == "{extra}"' in r], {extra})
        added = pulled - core_set
        report[extra] = {
            "packages": len(added),
            "mb": round(sum(sizes.get(n, 0) for n in added) / 1e6, 1),
            "largest": _largest(added, sizes),
            "missing": sorted(missing),
        }
    print(json.dumps(report, indent=1))


def _largest(names: set[str], sizes: dict[str, int], n: int = 4) -> dict[str, float]:
    ranked = sorted(names, key=lambda x: -sizes.get(x, 0))[:n]
    return {x: round(sizes.get(x, 0) / 1e6, 1) for x in ranked}


if __name__ == "__main__":
    main()
