"""PrefIx's record types: a session's task and outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rapport.log import BaseOutcome, BaseTask

from ._alignment import Alignment
from ._checker import Accuracy
from ._executor import ExecutionResult


class PrefixTask(BaseTask):
    """PrefIx: a BFCL multi-turn task, with stand-ins if coarsening must drop it."""

    kind: Literal["prefix"] = "prefix"
    task_id: str
    backups: list[str] = Field(default_factory=list)
    seed: int = 0


class SettingAlignment(Alignment):
    """One setting's alignment in a session."""

    setting: str
    dimension: str


class PrefixOutcome(BaseOutcome):
    """PrefIx: the task played, its accuracy and preference alignment."""

    kind: Literal["prefix"] = "prefix"
    task_id: str
    settings: list[str] = Field(default_factory=list)
    dropped: bool = False
    """Coarsening dropped the task and its stand-ins: nothing was played."""
    instruction: str = ""
    failures: dict[str, int] = Field(default_factory=dict)
    accuracy: Accuracy | None = None
    alignment: list[SettingAlignment] = Field(default_factory=list)
    calls: list[ExecutionResult] = Field(default_factory=list)
    judge_runs: int = 0
    """Samples each judge took of this session (first greedy, the rest sampled)."""
    reliability: str = ""
    """The judge-stability protocol of the run: ``repeats`` or ``paper``."""
    task_data: str = ""
    """Where the BFCL task came from (``bfcl-eval 2026.3.23 (installed, v4)``)."""
    instruction_source: str = ""
    """Where the task's coarse instruction came from: the user model, or the paper's fixed
    tasks (with the file)."""
    rubric: str = ""
    """Which rubric and judge prompt the UX judges ran: ours, or a PrefIX checkout's."""

    def topic(self) -> str:
        return self.task_id
