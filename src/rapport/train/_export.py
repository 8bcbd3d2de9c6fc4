"""`rapport train data`: run stores in, a user-split JSONL data set out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ._data import (
    ReflectionExample,
    build_examples,
    load_preferences,
    memory_notes_of,
    split_by_user,
    write_jsonl,
)

TRAIN_FILE = "train.jsonl"
EVAL_FILE = "eval.jsonl"


class DatasetSummary(BaseModel):
    """What `export_dataset` wrote."""

    out: Path
    train_examples: int
    eval_examples: int
    train_users: list[str]
    eval_users: list[str]
    enforcements: int
    target_sources: dict[str, int]


def collect_examples(
    run_dirs: Sequence[Path],
    *,
    taxonomy: str = "collab",
    condition: str | None = None,
    targets: Literal["memory", "template"] = "memory",
) -> list[ReflectionExample]:
    """Examples of every finished session in the runs (``memory`` falls back to template).

    Raises:
        FileNotFoundError: a directory holds no run.
    """
    from rapport.store import RunStore

    preferences = load_preferences(taxonomy)
    examples: list[ReflectionExample] = []
    for run_dir in run_dirs:
        with RunStore(run_dir, create=False) as store:
            records = store.sessions(condition=condition)
            notes = memory_notes_of(store.memory_versions(condition=condition))
        examples.extend(
            build_examples(
                records,
                preferences,
                run=Path(run_dir).name,
                memory_notes=notes if targets == "memory" else None,
            )
        )
    return examples


def export_dataset(
    run_dirs: Sequence[Path],
    out: Path,
    *,
    taxonomy: str = "collab",
    condition: str | None = None,
    targets: Literal["memory", "template"] = "memory",
    eval_fraction: float = 0.2,
    seed: int = 0,
) -> DatasetSummary:
    """Write ``train.jsonl`` and ``eval.jsonl`` (no user in both) and ``summary.json``."""
    examples = collect_examples(run_dirs, taxonomy=taxonomy, condition=condition, targets=targets)
    train, evaluation = split_by_user(examples, eval_fraction=eval_fraction, seed=seed)
    write_jsonl(train, out / TRAIN_FILE)
    write_jsonl(evaluation, out / EVAL_FILE)
    sources: dict[str, int] = {}
    for example in examples:
        sources[example.target_source] = sources.get(example.target_source, 0) + 1
    summary = DatasetSummary(
        out=out,
        train_examples=len(train),
        eval_examples=len(evaluation),
        train_users=sorted({e.user_id for e in train}),
        eval_users=sorted({e.user_id for e in evaluation}),
        enforcements=sum(len(e.enforced) for e in examples),
        target_sources=sources,
    )
    (out / "summary.json").write_text(json.dumps(summary.model_dump(mode="json"), indent=2))
    return summary
