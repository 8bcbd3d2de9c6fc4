"""The study as a benchmark: a real person is the user; the session loop, memory, scoring
and store are the same as in a simulated run.

The person's side of a session is a `HumanSide` the study app connects (`connect`): the
episode replays what is already stored (a session resumed after a restart or days later),
waits for the participant's next message, hands each agent reply back to be stored and
shown, and after the conversation waits for the session's survey.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from pydantic import Field

from rapport.llm import Message, ModelOutput, ModelRoles
from rapport.log import (
    BaseTask,
    Condition,
    ExperimentConfig,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    Table,
    UserSpec,
)

from .._protocol import AgentRequest, Benchmark, Episode, SessionLog
from ._closing import closing_tables
from ._design import SESSIONS, Assignment, StudyProblem
from ._options import MEMORY_DEFAULTS, PAPER_PROTOCOL, StudyOptions
from ._outcome import StudyOutcome, study_outcome
from ._survey import ITEM_IDS, SurveyAnswers
from ._tables import free_text_table, impact_table, memory_difference_table, survey_table

INSTRUCTIONS = """You are an assistant helping a person with writing, maths and coding \
problems, in a conversation. They are working on a problem that is not shown to you: learn \
what it is from what they tell you, ask when something is unclear, help them reach a \
solution, and adapt to how they like to work."""
"""The agent's instructions. The problem is not in them: in MultiSessionCollab's user study
the participant reads the problem and the agent learns it only from the conversation (the
authors' app, ``full_human_study.py``, tells the participant the agent cannot see it)."""


class HumanSide(Protocol):
    """The participant's side of one session, as the study app provides it."""

    def transcript(self) -> list[tuple[Literal["user", "agent"], str]]:
        """The messages stored so far, in order (a resumed session replays them)."""
        ...

    async def next_message(self) -> str | None:
        """The participant's next message (stored already); None: they ended the session."""
        ...

    async def agent_replied(self, text: str) -> None:
        """Store the agent's reply and show it; returns once it is stored."""
        ...

    async def survey(self) -> SurveyAnswers:
        """The session's survey answers (stored already)."""
        ...


HumanConnector = Callable[[SessionSpec, UserSpec, Condition], HumanSide]


class StudyTask(BaseTask):
    """What a study session is about."""

    kind: Literal["study"] = "study"
    study_type: str
    block: int
    """The block's position in the participant's study (0: first)."""
    problem: StudyProblem
    preferences: list[str] = Field(default_factory=list)
    """The preferences the participant adopts in this study type."""


class StudyEpisode(Episode):
    """One session with a real participant."""

    def __init__(self, info: SessionInfo, task: StudyTask, user: UserSpec, human: HumanSide):
        self.info, self.task, self.user, self.human = info, task, user, human
        self.instructions = INSTRUCTIONS
        self.history: list[Message] = []
        self.answers: SurveyAnswers | None = None

    async def start(self, log: SessionLog) -> None:
        for speaker, text in self.human.transcript():
            self._say(log, speaker, text)
        if not self.history or self.history[-1].role == "assistant":
            await self._listen(log)

    def request(self) -> AgentRequest:
        return AgentRequest(messages=list(self.history), instructions=self.instructions)

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        await self.human.agent_replied(output.text)
        self._say(log, "agent", output.text)
        await self._listen(log)

    async def finish(self, log: SessionLog) -> None:
        self.answers = await self.human.survey()

    def outcome(self) -> StudyOutcome:
        problem = self.task.problem
        return StudyOutcome(
            study_type=self.task.study_type,
            problem_id=problem.id,
            domain=problem.domain,
            problem_kind=problem.kind,
            block=self.task.block,
            preferences=list(self.task.preferences or self.user.preferences),
            ratings=dict(self.answers.ratings) if self.answers else {},
            impact=self.answers.impact if self.answers else None,
            feedback=self.answers.feedback if self.answers else "",
            own_preferences=self.answers.own_preferences if self.answers else "",
        )

    async def _listen(self, log: SessionLog) -> None:
        message = await self.human.next_message()
        if message is None:
            self.done = True
        else:
            self._say(log, "user", message)

    def _say(self, log: SessionLog, speaker: Literal["user", "agent"], text: str) -> None:
        log.say(speaker, text)
        self.history.append(
            Message(role="user" if speaker == "user" else "assistant", content=text)
        )


class StudyBenchmark(Benchmark):
    """MultiSessionCollab's user study: real participants, blocks of three sessions (a study
    type under one condition), a survey after each. Played by ``rapport study serve``,
    never ``rapport run``."""

    name = "study"
    metrics = ("length", *ITEM_IDS)
    lower_is_better = frozenset({"length"})
    produces = (StudyOutcome,)
    roles = ()
    options_model = StudyOptions
    memory_defaults = MEMORY_DEFAULTS
    paper_protocol = PAPER_PROTOCOL

    def __init__(self, options: StudyOptions) -> None:
        self.options = options
        self.design = options.design
        self._assignments = {a.participant: a for a in options.assignments}
        self._human: HumanConnector | None = None

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> StudyBenchmark:
        """Build from a study's run header (its options hold the design and assignments).

        Raises:
            ValueError: the options hold no study (``rapport run study``).
        """
        if "design" not in config.options:
            raise ValueError(
                "the study benchmark is played by people: make one with `rapport study create`"
            )
        return cls(StudyOptions.model_validate(config.options))

    def connect(self, human: HumanConnector) -> None:
        """Say where each session's participant side comes from (the study app)."""
        self._human = human

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """The participants (the first ``n``)."""
        return [self.user(a.participant) for a in self.options.assignments[:n]]

    def user(self, participant: str) -> UserSpec:
        """One participant as a user (KeyError when there is none)."""
        a = self._assignments[participant]
        attributes: dict[str, Any] = {"study_types": list(a.study_types), "order": list(a.order)}
        return UserSpec(id=a.participant, preferences=a.all_preferences(), attributes=attributes)

    def assignment(self, participant: str) -> Assignment:
        """What a participant does (KeyError when there is none)."""
        return self._assignments[participant]

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """The sessions of the participant's first condition."""
        first = self._assignments[user.id].order[0]
        return self.block_sessions(user.id, first)[:n]

    def block_sessions(self, participant: str, condition: str) -> list[SessionSpec]:
        """The participant's sessions under one condition, by their index in the run store:
        each of the condition's blocks in turn (one per study type the participant does)."""
        a = self._assignments[participant]
        bank = self.design.problem_bank()
        specs = []
        for position, block in enumerate(a.blocks):
            if block.condition != condition:
                continue
            task_of = functools.partial(
                StudyTask,
                study_type=block.study_type,
                block=position,
                preferences=list(a.preferences[block.study_type]),
            )
            specs += [
                SessionSpec(
                    id=problem_id,
                    user_id=participant,
                    index=block.first + i,
                    task=task_of(problem=bank[problem_id]),
                )
                for i, problem_id in enumerate(block.problems[:SESSIONS])
            ]
        return sorted(specs, key=lambda s: s.index)

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> StudyEpisode:
        """The session with the participant the connected app provides."""
        if self._human is None:
            raise RuntimeError("the study benchmark plays only inside `rapport study serve`")
        task = spec.task_as(StudyTask)
        info = SessionInfo(
            index=spec.index,
            benchmark=self.name,
            task=f"{task.problem.domain}: {task.problem.kind}",
        )
        return StudyEpisode(info, task, user, self._human(spec, user, condition))

    def score(self, record: SessionRecord) -> dict[str, float]:
        """``length``: messages in the conversation; each survey item's rating (1..5)."""
        scores = {"length": float(sum(t.speaker in ("user", "agent") for t in record.turns))}
        outcome = study_outcome(record)
        if outcome is not None:
            scores.update({k: float(v) for k, v in outcome.ratings.items()})
        return scores

    @classmethod
    def session_series(
        cls, config: ExperimentConfig, records: Sequence[SessionRecord]
    ) -> list[tuple[str, int] | None] | None:
        """Each study type is a series of its own, by the session's number in its block: a
        condition's sessions are numbered on over the study types in the run store, and
        participants meet the types in different orders, so those numbers do not join."""
        if "assignments" not in config.options:
            return None
        options = StudyOptions.model_validate(config.options)
        people = {a.participant: a for a in options.assignments}
        places: list[tuple[str, int] | None] = []
        for record in records:
            try:
                block = people[record.user_id].block_at(record.condition, record.index)
            except KeyError:
                places.append(None)
                continue
            places.append((block.study_type, record.index - block.first))
        return places

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """Per session and condition: the survey (median, mean with CI; the paper's Table
        5), the memory minus no-memory difference (its Figure 10), the impact answers and
        the free text; then the closing questionnaire."""
        if not records:
            return []
        return [
            survey_table(records),
            *memory_difference_table(records),
            impact_table(records),
            free_text_table(records),
            *closing_tables(records),
        ]
