"""Time RAG retrieval over 100,000 stored utterances (target: under 50 ms per query).

Indexes generated MPT utterances and calls, then times `UtteranceIndex.search` (query
encoding included) for each backend available. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from rapport.envs.mpt import generate_users
from rapport.memory._embed import minilm_path
from rapport.memory._rag import UtteranceIndex


def corpus(size: int) -> list[str]:
    """At least ``size`` utterances and calls from generated users (cut to ``size``)."""
    texts: list[str] = []
    seed = 0
    while len(texts) < size:
        for user in generate_users(200, seed):
            for session in user["history"]:
                texts += [f"{u['role']}: {u['text']}" for u in session["dialogue"]]
                texts.append(f"call: {session['call']}")
        seed += 1
    return texts[:size]


def dense_pool(texts: list[str], unique: int) -> list[str]:
    """The corpus rebuilt from its first ``unique`` distinct texts, cycled to the same size.

    Search cost does not depend on which vectors are stored, only on how many; this bounds
    the one-off MiniLM encoding on a small CPU without changing what a query costs.
    """
    pool = list(dict.fromkeys(texts))[:unique]
    return [pool[i % len(pool)] for i in range(len(texts))]


def time_backend(backend: str, texts: list[str], queries: list[str], k: int) -> dict[str, object]:
    """Index build time and per-query latency of one backend."""
    index = UtteranceIndex(backend)  # type: ignore[arg-type]
    started = time.perf_counter()
    index.add(texts)
    index.search(queries[0], k)  # builds lazy structures; not timed per query
    build = time.perf_counter() - started
    latencies = []
    for query in queries:
        t0 = time.perf_counter()
        index.search(query, k)
        latencies.append((time.perf_counter() - t0) * 1000)
    latencies.sort()
    result: dict[str, object] = {
        "backend": backend,
        "embedder": index._embedder().name if backend != "bm25" else None,
        "build_seconds": round(build, 2),
        "ms_per_query_median": round(statistics.median(latencies), 2),
        "ms_per_query_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
        "meets_target": statistics.median(latencies) < 50,
    }
    if backend != "bm25":
        result.update(split_timings(index, queries, k))
    return result


def split_timings(index: UtteranceIndex, queries: list[str], k: int) -> dict[str, float]:
    """Median ms of the two halves of a dense query: encoding it, and searching the rows."""
    encode, search = [], []
    for query in queries:
        t0 = time.perf_counter()
        vector = index._embedder().encode([query])[0]
        t1 = time.perf_counter()
        index.search_vector(vector, k)
        search.append((time.perf_counter() - t1) * 1000)
        encode.append((t1 - t0) * 1000)
    return {
        "encode_ms_median": round(statistics.median(encode), 2),
        "search_ms_median": round(statistics.median(search), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--backends", default="auto", help="comma list or 'auto'")
    parser.add_argument(
        "--torch-threads", type=int, default=0, help="torch threads for building (0: default)"
    )
    parser.add_argument(
        "--embed-unique",
        type=int,
        default=3000,
        help="distinct texts MiniLM encodes for the dense index (0: all)",
    )
    args = parser.parse_args()
    if args.torch_threads and minilm_path():
        import torch

        torch.set_num_threads(args.torch_threads)
    texts = corpus(args.size)
    queries = [t.split(": ", 1)[-1] for t in texts[:: max(1, len(texts) // args.queries)]]
    queries = queries[: args.queries]
    backends = (
        args.backends.split(",")
        if args.backends != "auto"
        else (["bm25", "hashing", "embed"] if minilm_path() else ["bm25", "hashing"])
    )
    dense = dense_pool(texts, args.embed_unique) if args.embed_unique else texts
    results = [time_backend(b, dense if b == "embed" else texts, queries, args.k) for b in backends]
    print(
        json.dumps(
            {
                "benchmark": "rag_retrieval",
                "stored": len(texts),
                "queries": len(queries),
                "k": args.k,
                "results": results,
                "target_ms": 50,
                "load_average_1m": round(os.getloadavg()[0], 2),
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
