"""The paper's fixed coarsened tasks (``--coarsened``): PrefIX's
``Processing/BFCL_v3_multi_turn_<category>_rewrite_filled_<setting>.json`` files.

Each file holds, as JSON lines, the tasks one setting ran on: ``id`` (a BFCL v3 task),
``high_level_instruction`` (the task's turns merged into one instruction, written once),
``initial_config`` and ``involved_classes`` (the BFCL task's), and ``path`` (the BFCL task's
reference functions, which the paper's code does not read). The paper's generation script
loads such a file in place of the category's BFCL file when it runs a setting of that name
(``_persona_prompt_override`` in ``bfcl_eval/_llm_response_generation.py``): the user
simulator gets ``high_level_instruction`` in place of the scripted turns, the backends start
from the entry's ``initial_config`` and ``involved_classes``, and the task is scored against
the BFCL ground truth of its id. Here the same: a fixed task is its BFCL v3 task with the
entry's instruction, configuration and classes; no model coarsens it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._settings import all_settings, extra_settings
from ._task_data import (
    TaskData,
    TaskDataError,
    check_backends,
    initial_config,
    involved_classes,
    json_lines,
)
from ._tasks import BfclTask

PROCESSING = "Processing"
_FILE = re.compile(
    r"BFCL_v3_multi_turn_(base|miss_param|miss_func|long_context)_rewrite_filled_(\w+)\.json"
)
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_INSTRUCTION_CHARS = 20_000


@dataclass(frozen=True)
class FixedTask:
    """A BFCL task with the paper's instruction for one setting."""

    task: BfclTask
    instruction: str


@dataclass(frozen=True)
class FixedTasks:
    """The fixed tasks of one setting and category, from one file."""

    file: str
    """Where they come from, as ``Processing/<file name>``."""
    tasks: tuple[FixedTask, ...]

    @property
    def source(self) -> str:
        """The instructions' source, in words, for the report."""
        return f"PrefIX fixed tasks ({self.file})"

    def task(self, task_id: str) -> FixedTask:
        """The fixed task of a BFCL id."""
        for fixed in self.tasks:
            if fixed.task.id == task_id:
                return fixed
        raise KeyError(f"{self.file} holds no task '{task_id}'")


@dataclass(frozen=True)
class PaperTasks:
    """Every fixed-task file of a PrefIX checkout for a setting this benchmark knows."""

    by_file: dict[tuple[str, str], FixedTasks]
    """(category, setting) -> its fixed tasks."""

    def for_setting(self, setting: str, categories: list[str]) -> FixedTasks | None:
        """The setting's fixed tasks in the first of `categories` that has a file."""
        for category in categories:
            if (category, setting) in self.by_file:
                return self.by_file[(category, setting)]
        return None


def open_paper_tasks(path: str | Path, data: TaskData) -> PaperTasks:
    """The fixed tasks under `path`, a PrefIX checkout or its ``Processing/`` folder,
    matched to the BFCL v3 tasks of `data`.

    Raises:
        TaskDataError: the path is missing or unreadable, `data` is not BFCL v3, no file
            names a known setting, or a row has the wrong shape or names no task of `data`.
    """
    if str(path).strip() == "":
        raise TaskDataError("coarsened tasks: the path is empty")
    if data.version != "v3":
        raise TaskDataError(
            "--coarsened needs --task-data with BFCL v3 tasks (the paper's fixed tasks are "
            f"v3 tasks); this run's task data is {data.label}"
        )
    where = Path(path).expanduser()
    if not where.is_dir():
        problem = "not a folder" if where.exists() else "no such folder"
        raise TaskDataError(f"coarsened tasks {path}: {problem}")
    folder = where / PROCESSING if (where / PROCESSING).is_dir() else where
    try:
        return _open(str(folder.resolve()), data, _stamp(folder))
    except TaskDataError as exc:
        raise TaskDataError(f"coarsened tasks {path}: {exc}") from None
    except OSError as exc:
        raise TaskDataError(f"coarsened tasks {path}: cannot read it ({exc})") from None


def _stamp(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies the folder's files' contents (names, sizes, mtimes)."""
    return tuple(
        sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.iterdir()
            if _FILE.fullmatch(p.name)
        )
    )


@functools.cache
def _open(folder: str, data: TaskData, _stamp: tuple[tuple[str, int, int], ...]) -> PaperTasks:
    known = {s.id for s in [*all_settings(), *extra_settings()]}
    by_file: dict[tuple[str, str], FixedTasks] = {}
    for path in sorted(Path(folder).iterdir()):
        match = _FILE.fullmatch(path.name)
        if match is None or match.group(2) not in known or not path.is_file():
            continue
        category, setting = match.groups()
        name = f"{PROCESSING}/{path.name}"
        by_file[(category, setting)] = FixedTasks(name, _fixed_tasks(path, name, data))
    if not by_file:
        raise TaskDataError(
            "holds no fixed-task file for a known setting "
            "(Processing/BFCL_v3_multi_turn_<category>_rewrite_filled_<setting>.json)"
        )
    return PaperTasks(by_file)


def _fixed_tasks(path: Path, name: str, data: TaskData) -> tuple[FixedTask, ...]:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TaskDataError(f"{name} is over {MAX_FILE_BYTES // 2**20} MB")
    rows = json_lines(path.read_bytes(), name)
    tasks = tuple(_fixed(row, data, f"{name} line {n}") for n, row in rows)
    ids = [t.task.id for t in tasks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise TaskDataError(f"{name}: task {twice[0]} appears twice")
    return tasks


def _fixed(row: dict[str, Any], data: TaskData, where: str) -> FixedTask:
    task_id = row.get("id")
    if not isinstance(task_id, str):
        raise TaskDataError(f"{where}: id must be a BFCL task id")
    try:
        task = data.task(task_id)
    except KeyError:
        raise TaskDataError(f"{where}: {task_id[:80]!r} is no task of {data.label}") from None
    instruction = row.get("high_level_instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskDataError(f"{where}: high_level_instruction must be a non-empty text")
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        raise TaskDataError(
            f"{where}: high_level_instruction is over {MAX_INSTRUCTION_CHARS} characters"
        )
    classes = involved_classes(row.get("involved_classes"), where)
    if sorted(classes) != sorted(task.involved_classes):
        raise TaskDataError(
            f"{where}: involved_classes {classes} are not those of {task_id} "
            f"({task.involved_classes}), whose ground truth the task is scored on"
        )
    path = row.get("path", [])
    if not isinstance(path, list) or not all(isinstance(p, str) for p in path):
        raise TaskDataError(f"{where}: path must be a list of function names")
    fixed = task.model_copy(
        update={
            "initial_config": initial_config(row.get("initial_config", {}), where),
            "involved_classes": classes,
            # The paper's entry replaces the BFCL one: it holds no held-back functions.
            "excluded_functions": [],
            "missed_functions": {},
            "writes": None,
        },
        deep=True,
    )
    check_backends(fixed, where)
    return FixedTask(fixed, instruction.strip())
