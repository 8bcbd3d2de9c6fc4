"""rapport's response cache (`rapport.store.SqliteCache`, one SQLite table) beside
`diskcache.Cache` (SQLite index plus files), on what a run does with it: put a completion per
model call (each committed before the call returns), read it back on a resume, and read it
from another process while one writes. Prints one JSON object (microseconds per operation,
bytes on disk, whether a second process saw every entry).

    python benchmarks/response_cache.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from pathlib import Path
from typing import Any

from rapport.llm import Completion, Usage
from rapport.store import SqliteCache


def completion(i: int) -> Completion:
    text = f"reply {i}: " + "word " * 120
    return Completion(text=text, usage=Usage(prompt_tokens=900, completion_tokens=160))


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bench_ours(folder: Path, calls: int) -> dict[str, Any]:
    cache = SqliteCache(folder / "cache.sqlite")
    start = time.perf_counter()
    for i in range(calls):
        cache.put(f"key-{i}", completion(i))
    put = time.perf_counter() - start
    start = time.perf_counter()
    hits = sum(cache.get(f"key-{i}") is not None for i in range(calls))
    get = time.perf_counter() - start
    cache.close()
    return _row(put, get, calls, hits, _size(folder))


def bench_diskcache(folder: Path, calls: int) -> dict[str, Any]:
    import diskcache

    cache = diskcache.Cache(str(folder / "diskcache"))
    start = time.perf_counter()
    for i in range(calls):
        cache.set(f"key-{i}", completion(i).model_dump_json())
    put = time.perf_counter() - start
    start = time.perf_counter()
    hits = 0
    for i in range(calls):
        body = cache.get(f"key-{i}")
        hits += body is not None and Completion.model_validate_json(body) is not None
    get = time.perf_counter() - start
    cache.close()
    return _row(put, get, calls, hits, _size(folder / "diskcache"))


def _row(put: float, get: float, calls: int, hits: int, size: int) -> dict[str, Any]:
    return {
        "put_us": round(put / calls * 1e6, 1),
        "get_us": round(get / calls * 1e6, 1),
        "hits": hits,
        "bytes": size,
    }


def _reader(path: str, calls: int, out: Any) -> None:
    cache = SqliteCache(path)
    seen = 0
    while seen < calls:  # every entry the writer committed becomes visible
        seen = sum(cache.get(f"key-{i}") is not None for i in range(calls))
    out.put(seen)


def two_processes(folder: Path, calls: int) -> dict[str, Any]:
    """One process writes `calls` entries while another reads until it sees them all."""
    path = str(folder / "shared.sqlite")
    SqliteCache(path).put("warm", completion(0))
    queue: Any = multiprocessing.Queue()
    reader = multiprocessing.Process(target=_reader, args=(path, calls, queue))
    reader.start()
    writer = SqliteCache(path)
    for i in range(calls):
        writer.put(f"key-{i}", completion(i))
    seen = queue.get(timeout=600)
    reader.join(timeout=60)
    return {"written": calls, "seen_by_reader": seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").mkdir()
        (root / "b").mkdir()
        result: dict[str, Any] = {"calls": args.calls, "ours": bench_ours(root / "a", args.calls)}
        try:
            result["diskcache"] = bench_diskcache(root / "b", args.calls)
        except ImportError:
            result["diskcache"] = "not installed"
        result["two_processes_ours"] = two_processes(root, min(args.calls, 300))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
