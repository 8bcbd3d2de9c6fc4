"""PrefIx's record types: a session's task and outcome."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rapport.log import BaseOutcome, BaseTask


class PrefixTask(BaseTask):
    """PrefIx: a BFCL multi-turn task, with stand-ins if coarsening must drop it."""

    kind: Literal["prefix"] = "prefix"
    task_id: str
    backups: list[str] = Field(default_factory=list)
    seed: int = 0


class PrefixOutcome(BaseOutcome):
    """PrefIx: the task played, its accuracy and preference alignment."""

    kind: Literal["prefix"] = "prefix"
    task_id: str
    settings: list[str] = Field(default_factory=list)
    dropped: bool = False
    """Coarsening dropped the task and its stand-ins: nothing was played."""
    instruction: str = ""
    failures: dict[str, int] = Field(default_factory=dict)
    accuracy: dict[str, Any] | None = None
    alignment: list[dict[str, Any]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    judge_runs: int = 0
    """Samples each judge took of this session (first greedy, the rest sampled)."""
    reliability: str = ""
    """The judge-stability protocol of the run: ``repeats`` or ``paper``."""
    task_data: str = ""
    """Where the BFCL task came from (``bfcl-eval 2026.3.23 (installed, v4)``)."""
    instruction_source: str = ""
    """Where the task's coarse instruction came from: the user model, or the paper's fixed
    tasks (with the file)."""

    def topic(self) -> str:
        return self.task_id
