"""A BFCL multi-turn task (scripted turns, backend state, per-turn ground truth), our
toolbox tasks, and tool specs from BFCL function docs."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rapport.llm import ToolSpec

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
    bfcl_version: Literal["v3", "v4"] = "v4"
    """The BFCL release whose backend API the task's calls are written for."""
    writes: int | None = Field(default=None, exclude=True)
    """State-changing reference calls, once counted (`write_count`)."""

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


@functools.cache
def toolbox_tasks() -> tuple[BfclTask, ...]:
    """Our multi-turn tasks on ``TradingBeaver`` and ``TravelBeaver``, with ground truth."""
    text = resources.files(__package__).joinpath("toolbox_tasks.json").read_text("utf-8")
    return tuple(BfclTask(category="toolbox", **row) for row in json.loads(text))


def tool_specs(
    task: BfclTask, turn: int, docs: Callable[[str], Sequence[dict[str, Any]]]
) -> list[ToolSpec]:
    """The task's callable backend functions at a turn as tool specs, from the function
    docs of each involved class (excluded functions and functions held back until a later
    turn left out)."""
    tools: list[ToolSpec] = []
    hidden = set(task.excluded_functions) | task.held_back(turn)
    for class_name in task.involved_classes:
        for doc in docs(class_name):
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
