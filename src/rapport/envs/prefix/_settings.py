"""The preference settings and interaction tools, read from package data."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field

from rapport.llm import ToolSpec

When = Literal[
    "before_call",
    "before_write",
    "before_first_write",
    "before_first_call",
    "after_call",
    "after_read",
    "after_failure",
    "before_retry",
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


class Setting(BaseModel):
    """One interaction preference a simulated user holds."""

    id: str
    dimension: str
    attribute: str
    definition: str
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
    """A tool that makes an interaction behaviour explicit."""

    name: str
    kind: Literal["narrative", "control"]
    description: str

    def spec(self) -> ToolSpec:
        """As a tool the agent can call: one text field (a message or a question)."""
        field = "question" if self.kind == "control" else "message"
        return ToolSpec(
            name=self.name,
            description=f"[interaction] {self.description}",
            parameters={
                "type": "object",
                "properties": {field: {"type": "string", "description": "What the user sees."}},
                "required": [field],
            },
        )


def _data(name: str) -> Any:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return yaml.safe_load(text)


@functools.cache
def dimensions() -> dict[str, str]:
    """Dimension id -> title."""
    return dict(_data("settings.yaml")["dimensions"])


@functools.cache
def all_settings() -> tuple[Setting, ...]:
    """The 31 settings, in their fixed order."""
    return tuple(Setting.model_validate(row) for row in _data("settings.yaml")["settings"])


def get_setting(setting_id: str) -> Setting:
    """One setting by id (KeyError with the known ids)."""
    for setting in all_settings():
        if setting.id == setting_id:
            return setting
    known = ", ".join(s.id for s in all_settings())
    raise KeyError(f"unknown PrefIx setting '{setting_id}' (known: {known})")


@functools.cache
def interaction_tools() -> tuple[InteractionTool, ...]:
    """The 13 interaction tools: 10 narrative, 3 dialogue-control."""
    return tuple(InteractionTool.model_validate(row) for row in _data("interaction_tools.yaml"))


def interaction_tool_names() -> frozenset[str]:
    """Names of the interaction tools."""
    return frozenset(t.name for t in interaction_tools())


def control_tool_names() -> frozenset[str]:
    """Names of the tools that wait for the user's answer."""
    return frozenset(t.name for t in interaction_tools() if t.kind == "control")
