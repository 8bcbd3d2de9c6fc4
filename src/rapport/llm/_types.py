"""Messages, tool specs, outputs and errors shared by every provider."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rapport.log import ToolCall

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One chat message."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class ToolSpec(BaseModel):
    """A function the model may call, described by a JSON schema of its parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class GenerateConfig(BaseModel):
    """Sampling settings of one call.

    `seed=None` lets the model derive one from its run seed and the request, so that the
    same request in the same run always samples the same way.
    """

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    """0 decodes greedily."""
    top_p: float = 1.0
    max_tokens: int = 512
    """Upper bound on completion tokens."""
    stop: tuple[str, ...] = ()
    seed: int | None = None
    """Explicit sampling seed; use a different one to draw several samples of one prompt."""
    max_retries: int = 2
    """Retries after an invalid structured output, each showing the model its error."""


class Usage(BaseModel):
    """Token counts of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ModelOutput(BaseModel):
    """What `Model.generate` returns."""

    text: str = ""
    parsed: Any = None
    """The schema instance, when a schema was given."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    model: str = ""


class ModelError(Exception):
    """A provider failed (missing weights, server unreachable, bad spec, ...).

    Attributes:
        role: the role of the model that failed (set by `Model.generate`; "" before).
    """

    role: str = ""


class ContextFull(ModelError):
    """The prompt does not fit the model's context: asking again cannot help."""


class OutputValidationError(ModelError):
    """The model's output stayed invalid for the requested schema after the retries."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw
