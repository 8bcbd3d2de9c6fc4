"""`rapport train data`: run stores in, a user-split JSONL data set out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

if TYPE_CHECKING:
    from rapport.store import RunStore

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


class DatasetError(ValueError):
    """Run dirs that cannot give a data set: another benchmark, or no such condition."""


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
        DatasetError: a run of another benchmark, or one without `condition`.
        rapport.store.StoreError: a damaged store.
    """
    from rapport.store import RunStore

    preferences = load_preferences(taxonomy)
    examples: list[ReflectionExample] = []
    for run_dir in run_dirs:
        with RunStore.open_readonly(run_dir) as store:
            _check_run(store, run_dir, condition)
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


def _check_run(store: RunStore, run_dir: Path, condition: str | None) -> None:
    run = store.run_or_none()
    # Stores written without a header (tests, tools) are taken as they are.
    if run is not None and not run.benchmark.startswith("collab"):
        raise DatasetError(
            f"{run_dir} holds a '{run.benchmark}' run; training data comes from collab runs"
        )
    if condition is not None and condition not in store.conditions():
        known = ", ".join(store.conditions()) or "none"
        raise DatasetError(f"{run_dir} has no condition '{condition}' (its conditions: {known})")


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
