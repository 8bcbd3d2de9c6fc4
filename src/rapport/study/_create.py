"""Making a study dir: the run store's header (benchmark ``study``, one condition per memory
method), the participants (counterbalanced), and one unguessable invite token each."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rapport.envs.study import (
    MAX_PARTICIPANTS,
    SESSIONS,
    DesignError,
    StudyBenchmark,
    StudyOptions,
    assign,
    load_design,
)
from rapport.eval import one_line
from rapport.log import Condition, ExperimentConfig, UserRecord
from rapport.memory import MEMORIES, is_memory
from rapport.store import RunStore

from ._db import STUDY_FILE, StudyDB

INVITES_FILE = "invites.csv"
RESEARCHER_FILE = "researcher.txt"


class StudyCreated(BaseModel):
    """What `create_study` made: where, the researcher's token, each participant's token."""

    study_dir: Path
    researcher_token: str
    tokens: dict[str, str]


def study_config(
    design_path: str | Path, participants: int, out: str | Path, models: dict[str, Any]
) -> tuple[ExperimentConfig, list[Condition]]:
    """The run header of a study (nothing written).

    Raises:
        DesignError: a bad design, participant count, memory or model setting.
    """
    design = load_design(design_path)
    if not 1 <= participants <= MAX_PARTICIPANTS:
        raise DesignError(f"--participants must be 1 to {MAX_PARTICIPANTS}, got {participants}")
    for name in design.conditions:
        if not is_memory(name):
            raise DesignError(
                f"{design_path}: conditions: unknown memory '{name}' "
                f"(known: {', '.join(sorted(MEMORIES))})"
            )
    options = StudyOptions(design=design, assignments=assign(design, participants))
    try:
        config = ExperimentConfig(
            benchmark=StudyBenchmark.name,
            memory=list(design.conditions),
            users=participants,
            sessions=SESSIONS * (len(design.study_types) if design.blocks == "all" else 1),
            seed=design.seed,
            run_dir=Path(out),
            models=models,
            options=options.model_dump(mode="json"),
            cache=False,
        )
    except ValidationError as exc:
        raise DesignError(one_line(exc)) from None
    return config, [Condition(name=c, memory=c) for c in design.conditions]


def create_study(
    design_path: str | Path,
    participants: int,
    out: str | Path,
    *,
    models: dict[str, Any] | None = None,
) -> StudyCreated:
    """Make a study dir from a design file.

    Raises:
        DesignError: bad input (nothing written), or ``out`` already holds something.
    """
    out = Path(out)
    config, conditions = study_config(design_path, participants, out, models or {})
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DesignError(f"{out} exists and is not an empty directory")
    benchmark = StudyBenchmark.from_config(config)
    out.mkdir(parents=True, exist_ok=True)
    with RunStore(out) as store:
        store.create_or_open(config, conditions)
        store.put_users(
            [
                UserRecord(user_id=u.id, spec=u.model_dump(mode="json"))
                for u in benchmark.users(participants, config.seed)
            ]
        )
    db = StudyDB(out, create=True)
    try:
        researcher, tokens = db.initialise(benchmark.options.assignments)
    finally:
        db.close()
    _write_private(out / RESEARCHER_FILE, f"{researcher}\n")
    rows = [["participant", "study_types", "order", "path"]]
    for a in benchmark.options.assignments:
        types, order = " then ".join(a.study_types), " then ".join(a.order)
        rows.append([a.participant, types, order, f"/p/{tokens[a.participant]}"])
    _write_private(out / INVITES_FILE, _csv(rows))
    return StudyCreated(study_dir=out, researcher_token=researcher, tokens=tokens)


def _csv(rows: list[list[str]]) -> str:
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def _write_private(path: Path, text: str) -> None:
    """A file only its owner can read (the tokens are the participants' keys)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def is_study_dir(path: str | Path) -> bool:
    """Whether a dir holds a study."""
    return (Path(path) / STUDY_FILE).is_file()
