"""PrefIx's taxonomy: the 31 interaction-preference settings (and our extras) and the
interaction tools they expect, read from package data (``prefix_settings.yaml``,
``prefix_tools.yaml``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field

from rapport.llm import ToolSpec

Category = Literal["base", "miss_param", "miss_func", "long_context", "toolbox"]
"""The BFCL multi-turn categories PrefIx draws tasks from, and ``toolbox``: our tasks on
PrefIx's two added toolboxes (``TradingBeaver``, ``TravelBeaver``)."""

When = Literal[
    "before_call",
    "before_write",
    "before_first_write",
    "before_first_call",
    "after_call",
    "after_read",
    "after_failure",
    "before_retry",
    "after_parallel",
    "after_first_call",
    "at_end",
    "never",
]


class PatternRule(BaseModel):
    """One expectation: an interaction tool at a place relative to the system calls."""

    tool: str
    when: When


class Needs(BaseModel):
    """What a task must offer to exercise a setting."""

    writes: int = 0
    """Minimum number of state-changing reference calls."""
    failure: bool = False
    """The setting is about failures: the trial gets an injected failure."""
    categories: list[Category] = Field(default_factory=list)
    """BFCL categories its tasks come from (empty: the run's categories)."""


class Setting(BaseModel):
    """One interaction preference a simulated user holds."""

    id: str
    """The paper's name for the setting."""
    dimension: str
    attribute: str
    definition: str
    extra: bool = False
    """Ours, not among the paper's 31 (runs only when named)."""
    pattern: list[PatternRule]
    keywords: list[str] = Field(default_factory=list)
    cue: str
    feedback: str
    needs: Needs = Field(default_factory=Needs)

    @property
    def forbidden_terms(self) -> list[str]:
        """Words the user must never say: the keywords and the setting's own name."""
        return [*self.keywords, self.id.replace("_", " "), self.attribute.replace("_", " ")]


class InteractionTool(BaseModel):
    """A tool that makes an interaction behaviour explicit, with structured fields."""

    name: str
    paper_name: str
    kind: Literal["narrative", "control"]
    description: str
    fields: dict[str, str]
    """Field -> what it holds (every field is a string)."""
    required: list[str] = Field(default_factory=list)

    def spec(self) -> ToolSpec:
        """As a tool the agent can call: the paper's fields, the required ones required."""
        properties = {
            name: {"type": "string", "description": text} for name, text in self.fields.items()
        }
        return ToolSpec(
            name=self.name,
            description=f"[interaction] {self.description}",
            parameters={"type": "object", "properties": properties, "required": self.required},
        )

    def validate_call(self, arguments: dict[str, Any], functions: Collection[str]) -> str | None:
        """What is wrong with a call's arguments (None: a valid call).

        Required fields must be non-empty strings, no unknown field may appear, a named
        ``execution_function`` must be one of the task's ``functions``, and a disambiguation
        must offer at least two options.
        """
        unknown = sorted(set(arguments) - set(self.fields))
        if unknown:
            return f"unknown field(s) {', '.join(unknown)}; fields: {', '.join(self.fields)}"
        for name in self.required:
            value = arguments.get(name)
            if not isinstance(value, str) or not value.strip():
                return f"required field '{name}' is missing or empty"
        for name, value in arguments.items():
            if not isinstance(value, str):
                return f"field '{name}' must be a string"
        function = arguments.get("execution_function", "").strip()
        if function and function_name(function) not in functions:
            return f"execution_function '{function}' is not one of this task's functions"
        if self.name == "disambiguation" and len(split_items(arguments["options"])) < 2:
            return "options must list at least two readings to choose between"
        return None


def function_name(text: str) -> str:
    """``mkdir(dir_name='x')`` or ``GorillaFileSystem.mkdir`` -> ``mkdir``."""
    return text.strip().split("(", 1)[0].rsplit(".", 1)[-1].strip()


def split_items(text: str) -> list[str]:
    """A list given as text: split on commas, semicolons, newlines and ' or '."""
    parts = re.split(r"[,;\n]|\bor\b", text)
    return [p.strip(" -*[]'\"") for p in parts if p.strip(" -*[]'\"")]


def _data(name: str) -> Any:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return yaml.safe_load(text)


@functools.cache
def dimensions() -> dict[str, str]:
    """Dimension id -> title."""
    return dict(_data("settings.yaml")["dimensions"])


@functools.cache
def _every_setting() -> tuple[Setting, ...]:
    return tuple(Setting.model_validate(row) for row in _data("settings.yaml")["settings"])


def all_settings() -> tuple[Setting, ...]:
    """The paper's 31 settings, in their fixed order."""
    return tuple(s for s in _every_setting() if not s.extra)


def extra_settings() -> tuple[Setting, ...]:
    """Our settings that are not among the paper's 31."""
    return tuple(s for s in _every_setting() if s.extra)


def get_setting(setting_id: str) -> Setting:
    """One setting by id, the 31 or an extra (KeyError with the known ids)."""
    for setting in _every_setting():
        if setting.id == setting_id:
            return setting
    known = ", ".join(s.id for s in _every_setting())
    raise KeyError(f"unknown PrefIx setting '{setting_id}' (known: {known})")


@functools.cache
def interaction_tools() -> tuple[InteractionTool, ...]:
    """The 14 interaction tools: the paper's 13 and the parameter rationale its trajectories
    name (11 narrative, 3 dialogue-control)."""
    return tuple(InteractionTool.model_validate(row) for row in _data("interaction_tools.yaml"))


def interaction_tool_names() -> frozenset[str]:
    """Names of the interaction tools."""
    return frozenset(t.name for t in interaction_tools())


def get_tool(name: str) -> InteractionTool:
    """One interaction tool by name."""
    return next(t for t in interaction_tools() if t.name == name)


def control_tool_names() -> frozenset[str]:
    """Names of the tools that wait for the user's answer."""
    return frozenset(t.name for t in interaction_tools() if t.kind == "control")
