"""The PrefIx benchmark: interaction preferences as tool calls on BFCL multi-turn tasks."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import ClassVar

from rapport.judges import judge_means_from_events
from rapport.llm import ModelRoles, stable_hash
from rapport.log import (
    Condition,
    ExperimentConfig,
    SessionRecord,
    SessionSpec,
    Table,
    UserSpec,
)

from .._protocol import Benchmark, GenericSetting
from ._across import across_models
from ._failures import FailurePlan, plan_failures
from ._options import (
    PAPER_PROTOCOL,
    PrefixOptions,
    combined_users,
    eligible,
    experience_dimensions,
)
from ._paper_tasks import FixedTasks, PaperTasks, open_paper_tasks
from ._report import headline_events, report_tables
from ._rubric import ALIGNMENT_IDS, own_rubric, rubric_from
from ._session import COARSENED_BY_MODEL, Plan, PrefixEpisode
from ._settings import Category, Setting, get_setting
from ._task_data import check_categories, open_task_data
from ._tasks import BfclTask
from ._types import PrefixOutcome, PrefixTask

_BACKUPS = 2
"""Stand-in tasks per session for when coarsening drops the chosen one."""


class PrefixBenchmark(Benchmark):
    """PrefIx: each user holds interaction preferences and brings one task per session."""

    name = "prefix"
    options_model = PrefixOptions
    paper_protocol = PAPER_PROTOCOL
    uses: ClassVar[frozenset[GenericSetting]] = frozenset({"sessions"})
    produces = (PrefixOutcome,)
    roles = ("user", "judge")
    metrics = (
        "accuracy",
        "bfcl_pass",
        "ux",
        "alignment",
        "align_precision",
        "align_recall",
        *(f"ux.{d}" for d in experience_dimensions()),
    )

    def __init__(self, options: PrefixOptions, *, seed: int = 0) -> None:
        """Open and check the task data (and the paper's fixed tasks, if named).

        Raises:
            TaskDataError: the task data or fixed tasks cannot be read or have the wrong
                shape, or lack a category the settings need.
        """
        self.options = options
        self.seed = seed
        self.task_data = open_task_data(options.task_data)
        needed = [c for s in options.settings for c in self._categories([get_setting(s)])]
        check_categories(self.task_data, list(dict.fromkeys(needed)))
        self.paper: PaperTasks | None = None
        if options.coarsened is not None:
            self.paper = open_paper_tasks(options.coarsened, self.task_data)
        self.rubric = (
            own_rubric() if options.rubric_from is None else rubric_from(options.rubric_from)
        )

    def _categories(self, settings: Sequence[Setting]) -> list[Category]:
        return task_categories(settings, self.options.categories)

    def fixed_tasks(self, settings: Sequence[Setting]) -> FixedTasks | None:
        """The paper's fixed tasks for a user: those of its first setting that has a file
        (in the setting's categories); None: coarsen tasks with the run's model."""
        if self.paper is None:
            return None
        for setting in settings:
            fixed = self.paper.for_setting(setting.id, list(self._categories([setting])))
            if fixed is not None:
                return fixed
        return None

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
        """The user's tasks in order, by seed: the paper's fixed tasks for its setting where
        ``--coarsened`` has them (as they are), else tasks that give every preference room."""
        settings = [get_setting(s) for s in user.preferences]
        fixed = self.fixed_tasks(settings)
        if fixed is not None:
            pool = [f.task for f in fixed.tasks]
        else:
            pool = [
                t
                for c in self._categories(settings)
                for t in self.task_data.tasks(c)
                if all(eligible(s, t) for s in settings)
            ]
        rng = random.Random(int(stable_hash(str(seed), user.id)[:12], 16))
        order = rng.sample(pool, k=len(pool))
        k = min(self.options.tasks or n, len(pool))
        chosen, spare = order[:k], order[k:]
        specs = []
        for i, t in enumerate(chosen):
            # Stand-ins, tried in order when coarsening has to drop the task (a fixed task
            # is not coarsened: nothing drops it).
            backups = [b.id for b in spare[_BACKUPS * i : _BACKUPS * (i + 1)] if fixed is None]
            task = PrefixTask(task_id=t.id, backups=backups, seed=seed)
            specs.append(SessionSpec(id=t.id, user_id=user.id, index=i, task=task))
        return specs

    def truth(self, user: UserSpec, condition: Condition) -> str:
        """The definitions of the settings the user holds."""
        return " ".join(get_setting(s).definition for s in user.preferences)

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> PrefixEpisode:
        """Coarsen the task (or a stand-in; a fixed task comes coarse), play it, then judge
        it."""
        task = spec.task_as(PrefixTask)
        settings = [get_setting(s) for s in user.preferences]
        fixed = self.fixed_tasks(settings)
        if fixed is not None:
            chosen = fixed.task(task.task_id)
            candidates, instruction, source = [chosen.task], chosen.instruction, fixed.source
        else:
            candidates = [self.task_data.task(t) for t in [task.task_id, *task.backups]]
            instruction, source = None, COARSENED_BY_MODEL
        plan = Plan(
            candidates=candidates,
            settings=settings,
            prompting=str(condition.settings.get("prompting", "no_p")),
            max_messages=self.options.max_messages,
            judge_repeats=self.judge_runs(spec, user),
            judge_key=f"{condition.name}:{user.id}:{spec.id}",
            reliability=self.options.reliability,
            result_chars=self.options.result_chars,
            task_data=self.task_data,
            instruction=instruction,
            instruction_source=source,
            rubric=self.rubric,
            judge_chars=self.options.judge_chars,
            matching=self.options.matching,
            judging=self.options.judging,
            judge_temperature=self.options.judge_temperature,
        )
        return PrefixEpisode(
            plan, spec.index, models, lambda settings, t: self.failures(settings, t, task.seed)
        )

    def failures(self, settings: Sequence[Setting], task: BfclTask, seed: int) -> FailurePlan:
        """The live failures of a session: none (the paper's), or with ``live_failures`` one
        seeded failure when a preference is about failures."""
        return _failures(settings, task, seed) if self.options.live_failures else FailurePlan()

    def judge_runs(self, spec: SessionSpec, user: UserSpec) -> int:
        """Samples per judge for a session: the paper's protocol gives its runs to the first
        session of the first users (its samples), one to the rest."""
        o = self.options
        if o.reliability == "repeats":
            return o.judge_repeats
        first = [u.id for u in self.users(0, self.seed)][: o.reliability_samples]
        return o.reliability_runs if spec.index == 0 and user.id in first else 1

    def score(self, record: SessionRecord) -> dict[str, float]:
        """Accuracy, alignment and the judges' means, from the record alone."""
        outcome = record.outcome
        if not isinstance(outcome, PrefixOutcome) or outcome.dropped or outcome.accuracy is None:
            return {}
        acc, per_setting = outcome.accuracy, outcome.alignment
        scores = {
            "accuracy": acc.accuracy,
            "bfcl_pass": acc.bfcl_pass,
            "align_precision": _mean([a.precision for a in per_setting]),
            "align_recall": _mean([a.recall for a in per_setting if a.recall is not None]),
        }
        judged = judge_means_from_events(headline_events(record))
        ux = {d: v for d, v in judged.items() if d not in ALIGNMENT_IDS}
        scores |= {f"ux.{d}": v for d, v in ux.items()}
        if ux:  # the UX score: the rubric's UX dimensions, preference alignment apart
            scores["ux"] = sum(ux.values()) / len(ux)
        aligned = [judged[d] for d in ALIGNMENT_IDS if d in judged]
        if aligned:
            scores["alignment"] = aligned[0]
        return {k: v for k, v in scores.items() if not math.isnan(v)}

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """Accuracy/UX per condition with gains, per dimension, alignment, reliability."""
        return report_tables(records)

    @classmethod
    def across_runs_tables(cls, runs: Mapping[str, Sequence[SessionRecord]]) -> list[Table]:
        """The paper's Tables 2 to 5 over runs of several agent models (label -> records)."""
        return across_models(runs)


def task_categories(settings: Sequence[Setting], default: Sequence[Category]) -> list[Category]:
    """The categories a user's tasks come from: those its settings need, else the run's."""
    needed = [c for s in settings for c in s.needs.categories]
    return list(dict.fromkeys(needed)) or list(default)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _failures(settings: Sequence[Setting], task: BfclTask, seed: int) -> FailurePlan:
    """A failure to recover from when a preference is about failures (none otherwise)."""
    if not any(s.needs.failure for s in settings):
        return FailurePlan()
    names = [c.split("(", 1)[0].strip() for c in task.reference_calls]
    return plan_failures(names, seed=seed, key=task.id)
