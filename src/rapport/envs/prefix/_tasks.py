"""BFCL multi-turn tasks, their ground truth and function docs, read from bfcl-eval's data."""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rapport.llm import ToolSpec
from rapport.prefs.prefix import Category

from ._toolboxes import DOC_FILES as TOOLBOX_DOC_FILES
from ._toolboxes import toolbox_docs

INSTALL_HINT = "PrefIx needs bfcl-eval: pip install --no-deps bfcl-eval==2026.3.23 mpmath"

DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}


class BfclTask(BaseModel):
    """One multi-turn task: scripted user turns, backend state and per-turn ground truth."""

    id: str
    category: str
    turns: list[str]
    """The scripted user messages, one per turn ("" for a turn with no user message)."""
    initial_config: dict[str, Any] = Field(default_factory=dict)
    involved_classes: list[str]
    excluded_functions: list[str] = Field(default_factory=list)
    ground_truth: list[list[str]]
    """Per turn, the reference call strings."""
    missed_functions: dict[int, list[str]] = Field(default_factory=dict)
    """``miss_func``: turn -> functions held back until that turn."""

    def held_back(self, turn: int) -> set[str]:
        """Functions not yet available at a turn."""
        return {f for t, names in self.missed_functions.items() if t > turn for f in names}

    @property
    def reference_calls(self) -> list[str]:
        """All reference calls, in order."""
        return [call for turn in self.ground_truth for call in turn]


def data_dir() -> Path:
    """bfcl-eval's data folder."""
    try:
        root = resources.files("bfcl_eval")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(INSTALL_HINT) from exc
    return Path(str(root)) / "data"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@functools.cache
def load_tasks(category: Category) -> tuple[BfclTask, ...]:
    """The 200 tasks of one multi-turn category, with their ground truth (``toolbox``: our
    tasks on PrefIx's two added toolboxes)."""
    if category == "toolbox":
        return toolbox_tasks()
    root = data_dir()
    questions = _read_jsonl(root / f"BFCL_v4_multi_turn_{category}.json")
    answers = {
        row["id"]: row["ground_truth"]
        for row in _read_jsonl(root / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json")
    }
    return tuple(_task(row, answers[row["id"]], category) for row in questions)


def _task(row: dict[str, Any], truth: list[list[str]], category: str) -> BfclTask:
    turns = [
        " ".join(m["content"] for m in turn if m.get("role") == "user") for turn in row["question"]
    ]
    return BfclTask(
        id=row["id"],
        category=category,
        turns=turns,
        initial_config=row.get("initial_config", {}),
        involved_classes=list(row["involved_classes"]),
        excluded_functions=list(row.get("excluded_function", [])),
        ground_truth=truth,
        missed_functions={int(t): list(f) for t, f in row.get("missed_function", {}).items()},
    )


@functools.cache
def toolbox_tasks() -> tuple[BfclTask, ...]:
    """Our multi-turn tasks on ``TradingBeaver`` and ``TravelBeaver``, with ground truth."""
    text = resources.files(__package__).joinpath("toolbox_tasks.json").read_text("utf-8")
    return tuple(BfclTask(category="toolbox", **row) for row in json.loads(text))


def task_by_id(task_id: str) -> BfclTask:
    """Look a task up by its BFCL id (``multi_turn_base_7``)."""
    category = task_id.removeprefix("multi_turn_").rsplit("_", 1)[0]
    for task in load_tasks(category):  # type: ignore[arg-type]
        if task.id == task_id:
            return task
    raise KeyError(f"no BFCL task '{task_id}'")


@functools.cache
def _docs(class_name: str) -> tuple[dict[str, Any], ...]:
    if class_name in TOOLBOX_DOC_FILES:
        return toolbox_docs(class_name)
    return tuple(_read_jsonl(data_dir() / "multi_turn_func_doc" / DOC_FILES[class_name]))


def system_tools(task: BfclTask, turn: int = 0) -> list[ToolSpec]:
    """The task's callable backend functions at a turn as tool specs (excluded functions
    and functions held back until a later turn left out)."""
    tools: list[ToolSpec] = []
    hidden = set(task.excluded_functions) | task.held_back(turn)
    for class_name in task.involved_classes:
        for doc in _docs(class_name):
            if doc["name"] in hidden:
                continue
            params = _json_schema(doc.get("parameters", {}))
            description = doc["description"].split("Tool description:", 1)[-1].strip()
            tools.append(ToolSpec(name=doc["name"], description=description, parameters=params))
    return tools


def _json_schema(node: Any) -> Any:
    """BFCL docs use pseudo types (``dict``, ``float``, ``tuple``): map them to JSON schema."""
    if isinstance(node, dict):
        out = {key: _json_schema(value) for key, value in node.items()}
        kind = out.get("type")
        mapped = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
        if isinstance(kind, str) and kind in mapped:
            out["type"] = mapped[kind]
        return out
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    return node
