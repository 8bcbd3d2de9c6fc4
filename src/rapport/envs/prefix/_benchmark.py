"""The PrefIx benchmark: interaction preferences as tool calls on BFCL multi-turn tasks."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rapport.agents import Agent
from rapport.eval import MultiJudge, judge_means_from_events
from rapport.llm import ModelRoles, stable_hash
from rapport.log import ExperimentConfig, NoteEvent, SessionRecord
from rapport.memory import Memory, SessionInfo

from .._protocol import Condition, SessionSpec, UserSpec
from ._alignment import align
from ._checker import check_accuracy, replay_reference
from ._coarsen import coarsen
from ._executor import SafeExecutor
from ._failures import FailurePlan, plan_failures
from ._options import (
    PrefixOptions,
    combined_users,
    eligible,
    judge_instructions,
    ux_dimensions,
)
from ._prompts import agent_instructions
from ._report import report_tables
from ._session import PrefixSession
from ._settings import Setting, get_setting, interaction_tools
from ._simulator import UserSimulator
from ._tasks import BfclTask, load_tasks, system_tools, task_by_id
from ._transcript import render_for_judge


@dataclass
class Trial:
    """One task played for one user: what the session needs beyond the agent and memory."""

    task: BfclTask
    settings: list[Setting]
    instruction: str
    failures: FailurePlan


_BACKUPS = 2
"""Stand-in tasks per session for when coarsening drops the chosen one."""


class PrefixBenchmark:
    """PrefIx: each user holds interaction preferences and brings one task per session."""

    name = "prefix"
    metrics: ClassVar[list[str]] = [
        "accuracy",
        "success",
        "align_precision",
        "align_recall",
        "ux",
        *(f"ux.{d.id}" for d in ux_dimensions()),
    ]

    def __init__(self, options: PrefixOptions, *, seed: int = 0) -> None:
        self.options = options
        self.seed = seed

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> PrefixBenchmark:
        """Validate ``config.options`` into `PrefixOptions`."""
        return cls(PrefixOptions.model_validate(config.options), seed=config.seed)

    def conditions(self, config: ExperimentConfig) -> list[Condition]:
        """Prompting condition x memory method, named ``p+reflection`` and so on."""
        return [
            Condition(name=f"{p}+{m}", memory=m, settings={"prompting": p})
            for p in self.options.condition
            for m in config.memory
        ]

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """One user per selected setting (``n`` is ignored: the settings decide)."""
        return [
            UserSpec(
                id="prefix-" + "+".join(group),
                preferences=group,
                attributes={"dimensions": [get_setting(s).dimension for s in group]},
            )
            for group in combined_users(self.options.settings, self.options.combine)
        ]

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """The user's tasks in order: tasks that give every preference room, by seed."""
        settings = [get_setting(s) for s in user.preferences]
        pool = [
            t
            for c in self.options.categories
            for t in load_tasks(c)
            if all(eligible(s, t) for s in settings)
        ]
        rng = random.Random(int(stable_hash(str(seed), user.id)[:12], 16))
        order = rng.sample(pool, k=len(pool))
        k = min(self.options.tasks or n, len(pool))
        chosen, spare = order[:k], order[k:]
        specs = []
        for i, t in enumerate(chosen):
            # Stand-ins, tried in order when coarsening has to drop the task.
            backups = [b.id for b in spare[_BACKUPS * i : _BACKUPS * (i + 1)]]
            task = {"task_id": t.id, "backups": backups, "seed": seed}
            specs.append(SessionSpec(id=t.id, user_id=user.id, index=i, task=task))
        return specs

    async def run_session(
        self,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        *,
        condition: Condition,
    ) -> SessionRecord:
        """Coarsen the task, play the session, then check accuracy, alignment and UX."""
        settings = [get_setting(s) for s in user.preferences]
        task = task_by_id(spec.task["task_id"])
        record = SessionRecord(
            condition=condition.name,
            user_id=user.id,
            index=spec.index,
            spec_id=spec.id,
            split=spec.split,
        )
        record.outcome = {"task_id": task.id, "settings": user.preferences}
        candidates = [task, *(task_by_id(b) for b in spec.task.get("backups", []))]
        for task in candidates:
            coarse = await coarsen(task, models.get("user"))
            if coarse.instruction is not None:
                break
            record.events.append(NoteEvent(text=coarse.reason))
        else:
            record.outcome["dropped"] = True
            return record
        record.outcome["task_id"] = task.id
        seed = int(spec.task.get("seed", self.seed))
        trial = Trial(task, settings, coarse.instruction, _failures(settings, task, seed))
        session = await self._play(trial, agent, memory, models, user, spec, condition)
        record.turns, record.events = session.turns, [*record.events, *session.events]
        record.outcome |= _outcome(trial, session)
        await self._judge(record, trial, models, condition)
        if record.events_of("error"):
            record.status = "error"
        return record

    async def _play(
        self,
        trial: Trial,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        user: UserSpec,
        spec: SessionSpec,
        condition: Condition,
    ) -> PrefixSession:
        ref = user.ref(truth=" ".join(s.definition for s in trial.settings))
        classes = ", ".join(trial.task.involved_classes)
        info = SessionInfo(index=spec.index, benchmark=self.name, task=classes)
        prompting = str(condition.settings.get("prompting", "no_p"))
        session = PrefixSession(
            executor=SafeExecutor(trial.task, failures=trial.failures),
            simulator=UserSimulator(models.get("user"), trial.settings, trial.instruction),
            agent=agent,
            memory=memory,
            user_ref=ref,
            instructions=agent_instructions(prompting, trial.settings),
            memory_context=await memory.context(ref, info),
            tools=[*system_tools(trial.task), *(t.spec() for t in interaction_tools())],
            max_messages=self.options.max_messages,
        )
        stop = await session.run()
        session.events.append(NoteEvent(text=f"session stopped: {stop}"))
        return session

    async def _judge(
        self, record: SessionRecord, trial: Trial, models: ModelRoles, condition: Condition
    ) -> None:
        rubric, instructions = list(ux_dimensions()), judge_instructions()
        judge = MultiJudge(rubric, instructions, repeats=self.options.judge_repeats)
        transcript, turn_ids = render_for_judge(record.turns, trial.settings, trial.instruction)
        key = f"{condition.name}:{record.user_id}:{record.spec_id}"
        result = await judge.score(models, transcript, turn_ids, key=key)
        record.events.extend(result.events())

    def score(self, record: SessionRecord) -> dict[str, float]:
        """Accuracy, alignment and the judges' means, from the record alone."""
        outcome = record.outcome
        if outcome.get("dropped") or "accuracy" not in outcome:
            return {}
        acc, per_setting = outcome["accuracy"], outcome["alignment"]
        scores = {
            "accuracy": float(acc["accuracy"]),
            "state_match": float(acc["state_match"]),
            "success": float(acc["state_match"] and not acc["missing"]),
            "align_precision": _mean([a["precision"] for a in per_setting]),
            "align_recall": _mean([a["recall"] for a in per_setting if a["recall"] is not None]),
        }
        ux = judge_means_from_events(record.events_of("judge"))
        scores |= {f"ux.{d}": v for d, v in ux.items()}
        if ux:
            scores["ux"] = sum(ux.values()) / len(ux)
        return {k: v for k, v in scores.items() if not math.isnan(v)}

    def report_tables(self, records: Sequence[SessionRecord]) -> list[Any]:
        """Accuracy/UX per condition with gains, per dimension, alignment, reliability."""
        return report_tables(records)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _failures(settings: Sequence[Setting], task: BfclTask, seed: int) -> FailurePlan:
    """A failure to recover from when a preference is about failures (none otherwise)."""
    if not any(s.needs.failure for s in settings):
        return FailurePlan()
    names = [c.split("(", 1)[0].strip() for c in task.reference_calls]
    return plan_failures(names, seed=seed, key=task.id)


def _outcome(trial: Trial, session: PrefixSession) -> dict[str, Any]:
    accuracy = check_accuracy(trial.task, session.executor, replay_reference(trial.task))
    alignment = [
        {"setting": s.id, "dimension": s.dimension, **align(s, session.timeline).model_dump()}
        for s in trial.settings
    ]
    return {
        "instruction": trial.instruction,
        "failures": trial.failures.targets,
        "accuracy": accuracy.model_dump(),
        "alignment": alignment,
        "calls": [r.model_dump() for r in session.executor.log],
    }
