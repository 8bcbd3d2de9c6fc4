"""Making a study dir: the run store's header (benchmark ``study``, one condition per memory
method), the participants (counterbalanced), and one unguessable invite token each."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rapport.envs import memory_options_for
from rapport.envs.study import (
    MAX_PARTICIPANTS,
    SESSIONS,
    DesignError,
    StudyBenchmark,
    StudyOptions,
    apply_app,
    assign,
    load_design,
    read_app,
)
from rapport.eval import model_roles, one_line
from rapport.llm import ModelError, ModelRoles
from rapport.log import Condition, ExperimentConfig
from rapport.memory import MEMORIES, create_memory, is_memory
from rapport.store import RUN_FILE, RunStore

from ._db import PRIVATE_DIR, STUDY_FILE, StudyDB, private_file

INVITES_FILE = "invites.csv"
RESEARCHER_FILE = "researcher.txt"


class StudyCreated(BaseModel):
    """What `create_study` made: where, the researcher's token, each participant's token."""

    study_dir: Path
    researcher_token: str
    tokens: dict[str, str]


def study_config(
    design_path: str | Path,
    participants: int,
    out: str | Path,
    models: dict[str, Any],
    *,
    problems_from: str | Path | None = None,
) -> tuple[ExperimentConfig, list[Condition]]:
    """The run header of a study (nothing written).

    Args:
        design_path: the design file.
        participants: how many participants.
        out: the study dir.
        models: role -> model spec (or its settings).
        problems_from: a checkout of the authors' user-study app, over the design's
            ``problems_from``: its problems, preference wordings and initial notes.

    Raises:
        DesignError: a bad design, participant count, memory or model setting.
    """
    design = load_design(design_path)
    checkout = problems_from or design.problems_from
    if checkout is not None:
        design = apply_app(design, read_app(checkout))
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
    layered = memory_options_for(config, StudyBenchmark.memory_defaults, set(design.conditions))
    for name, given in design.memory_options.items():
        layered[name] = {**layered.get(name, {}), **given}
    config = config.model_copy(update={"memory_options": layered})
    _check_memories(config, design_path)
    return config, [Condition(name=c, memory=c) for c in design.conditions]


def models_ready(config: ExperimentConfig) -> None:
    """Build each model a study's agent and memories use (nothing is loaded or asked).

    Raises:
        rapport.llm.ModelError: one line naming the role and what is wrong.
    """
    models = model_roles(config, cache=None)
    models.check_names()
    roles = {"agent"}
    for name in config.memory:
        memory = create_memory(name, models, **config.memory_options.get(name, {}))
        roles |= set(memory.roles or ())
    for role in sorted(roles):
        try:
            models.get(role)
        except ModelError as exc:
            raise ModelError(f"model role '{role}': {exc}") from exc


def _check_memories(config: ExperimentConfig, design_path: str | Path) -> None:
    """Each condition's memory takes its options (checked without building any model).

    Raises:
        DesignError: an option the memory refuses, named with its method.
    """
    for name in config.memory:
        try:
            create_memory(name, ModelRoles({}), **config.memory_options.get(name, {}))
        except (ValidationError, ValueError, TypeError) as exc:
            raise DesignError(f"{design_path}: memory_options.{name}: {one_line(exc)}") from None


def create_study(
    design_path: str | Path,
    participants: int,
    out: str | Path,
    *,
    models: dict[str, Any] | None = None,
    invite_days: float | None = None,
    problems_from: str | Path | None = None,
    check_models: bool = False,
) -> StudyCreated:
    """Make a study dir from a design file: the dir readable by its owner only, and every
    file in it too. Nothing is left behind when it fails (a full disk), so it can be
    made again.

    Args:
        design_path: the design file.
        participants: how many participants.
        out: the new study dir (missing or empty).
        models: model per role.
        invite_days: invites stop working this many days from now (None: never).

    Args:
        design_path: the design file.
        participants: how many participants.
        out: the new study dir.
        models: role -> model spec (default: the embedded model).
        problems_from: a checkout of the authors' user-study app (see `study_config`).
        check_models: first build every model the study will use, so that missing
            weights or an unknown provider fail here rather than at ``serve`` (what
            ``rapport study create`` does; a server is not asked to answer yet).

    Raises:
        DesignError: bad input (nothing written), or ``out`` already holds something.
        OSError, sqlite3.Error: the study could not be written (nothing is left).
        rapport.llm.ModelError: a model the study names cannot be used (missing weights,
            an unknown provider): nothing written.
    """
    out = Path(out)
    config, conditions = study_config(
        design_path, participants, out, models or {}, problems_from=problems_from
    )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DesignError(f"{out} exists and is not an empty directory")
    if invite_days is not None and invite_days <= 0:
        raise DesignError(f"invites must last more than 0 days, got {invite_days}")
    if check_models:
        models_ready(config)
    made_dir = not out.exists()
    try:
        return _write_study(out, config, conditions, invite_days)
    except BaseException:
        _unmake(out, made_dir)
        raise


def _unmake(out: Path, made_dir: bool) -> None:
    """Remove what a failed `create_study` wrote."""
    if made_dir:
        shutil.rmtree(out, ignore_errors=True)
        return
    for child in list(out.iterdir()) if out.is_dir() else []:
        with contextlib.suppress(OSError):
            shutil.rmtree(child) if child.is_dir() else child.unlink()


def _write_study(
    out: Path, config: ExperimentConfig, conditions: list[Condition], invite_days: float | None
) -> StudyCreated:
    benchmark = StudyBenchmark.from_config(config)
    out.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    os.chmod(out, PRIVATE_DIR)
    private_file(out / RUN_FILE)  # SQLite keeps the mode, and gives it to -wal and -shm
    with RunStore(out) as store:
        store.create_or_open(config, conditions)  # participants join as they consent
    db = StudyDB(out, create=True)
    try:
        researcher, tokens = db.initialise(benchmark.options.assignments)
        if invite_days is not None:
            db.expire(time.time() + invite_days * 86400)
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


def make_private(study_dir: Path) -> None:
    """Give a study dir made before its files were private the modes it has now (its dir
    0700, its files 0600); what cannot be changed (a read-only disk) stays as it is."""
    with contextlib.suppress(OSError):
        os.chmod(study_dir, PRIVATE_DIR)
    for child in study_dir.iterdir():
        if child.is_file():
            with contextlib.suppress(OSError):
                os.chmod(child, 0o600)


def is_study_dir(path: str | Path) -> bool:
    """Whether a dir holds a study."""
    return (Path(path) / STUDY_FILE).is_file()
