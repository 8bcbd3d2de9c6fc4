"""What the run log keeps of model calls: the tool calls a model asked for, and the
accounting record of every call."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """A function call a model asked for; arguments are already parsed JSON."""

    model_config = ConfigDict(frozen=True)

    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ModelCall(BaseModel):
    """The accounting record of one `generate` call (one per call, retries included)."""

    role: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    original_chars: int | None = None
    """Set when the output was cut at the provider boundary: its length in characters before."""
