"""MultiSessionCollab: simulated users with preferences bring one problem per session."""

from __future__ import annotations

import random
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from rapport.agents import Agent
from rapport.envs import Condition, SessionSpec, UserSpec
from rapport.llm import GenerateConfig, ModelRoles, stable_hash
from rapport.log import ExperimentConfig, SessionRecord
from rapport.memory import Memory
from rapport.users import Persona, as_collab_user, load_personas_jsonl, make_users

from ._agreement import agreement_table
from ._problems import Problem, is_correct, load_problems
from ._session import CollabSession


class CollabOptions(BaseModel):
    """The options of ``collab`` (``config.options``; unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid")

    problems: str = "generated"
    """Where problems come from: ``math500``, ``generated`` or a local file path."""
    personas: str | None = None
    """A Persona Hub style JSONL file; None: personas generated from attribute lists."""
    agent_temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """The agent's sampling temperature (seeded per call, so runs still repeat exactly).
    Greedy decoding makes small agents repeat one reply word for word after an enforcement."""


class CollabBenchmark:
    """Simulated users, each with a persona and three preferences, bring one problem per
    session to the agent; memory may carry what it learned between sessions.

    Per session it measures TS (the user's final draft answer is correct), UE (the number
    of enforcements) and Len (the number of messages, user's and agent's).

    Args:
        problems: the run's problem pool (sessions draw from it).
        max_turns: the most user-agent turn pairs per session.
        personas: personas to draw users from; None: generated from attribute lists.
        agent_temperature: the agent's sampling temperature.
    """

    name = "collab"
    metrics: ClassVar[tuple[str, ...]] = ("TS", "UE", "Len")
    lower_is_better: ClassVar[frozenset[str]] = frozenset({"UE", "Len"})

    def __init__(
        self,
        problems: list[Problem],
        *,
        max_turns: int = 10,
        personas: list[Persona] | None = None,
        agent_temperature: float = 0.7,
    ) -> None:
        self.pool = list(problems)
        self.max_turns = max_turns
        self.personas = personas
        self.agent_temperature = agent_temperature

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        """Build from a config: validate the options, load the problems and personas.

        The pool holds users x sessions problems drawn with the run's seed (or the whole
        source when it is smaller), so no problem repeats within a run when the source is
        large enough; `sessions` wraps around a smaller pool.

        Raises:
            pydantic.ValidationError: an unknown or badly typed option.
            ProblemSourceError: the problem source cannot be read or is too small.
            PersonaFileError: the persona file is missing or malformed.
        """
        options = CollabOptions.model_validate(config.options)
        problems = load_problems(
            options.problems, config.users * config.sessions, config.seed, allow_fewer=True
        )
        personas = load_personas_jsonl(options.personas) if options.personas else None
        return cls(
            problems,
            max_turns=config.max_turns,
            personas=personas,
            agent_temperature=options.agent_temperature,
        )

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """`n` reproducible users (persona + three non-conflicting preferences)."""
        return list(make_users(n, seed, self.personas))

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """`n` sessions, one problem each, the same for every condition of the run.

        The pool is shuffled by `seed`; user ``i`` takes the ``n`` problems after the first
        ``i * n``, wrapping around when the pool is smaller than users x sessions.
        """
        if not self.pool:
            return []
        order = random.Random(f"collab-problems:{seed}").sample(self.pool, len(self.pool))
        start = _user_index(user) * n
        chosen = [order[(start + i) % len(order)] for i in range(n)]
        return [
            SessionSpec(id=p.id, user_id=user.id, index=i, task=p.model_dump())
            for i, p in enumerate(chosen)
        ]

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
        """Run one session; a model error ends it with status ``error`` (never raises).

        ``condition.settings`` may set ``mode`` (``multiturn`` | ``direct``) and
        ``preferences`` (whether the user holds any).
        """
        session = CollabSession(
            spec,
            as_collab_user(user),
            Problem.model_validate(spec.task),
            condition,
            max_turns=self.max_turns,
            benchmark=self.name,
            agent_config=GenerateConfig(temperature=self.agent_temperature, top_p=0.95),
        )
        return await session.run(agent, memory, models)

    def score(self, record: SessionRecord) -> dict[str, float]:
        """TS: 1 if the final draft answer is correct; UE: enforcements; Len: messages.

        Len counts every message of the session, the user's (opening and last reaction
        included) and the agent's.
        """
        outcome: dict[str, Any] = record.outcome
        draft = str(outcome.get("draft", ""))
        problem = Problem.model_validate(outcome["problem"]) if "problem" in outcome else None
        solved = bool(draft) and problem is not None and is_correct(problem, draft)
        return {
            "TS": float(solved),
            "UE": float(len(record.events_of("enforcement"))),
            "Len": float(sum(1 for t in record.turns if t.speaker in ("user", "agent"))),
        }

    def report_tables(self, records: list[SessionRecord]) -> list[dict[str, object]]:
        """How often enforcement agreed with the checkers, per condition (when any could)."""
        table = agreement_table(records)
        return [table] if table["rows"] else []


def _user_index(user: UserSpec) -> int:
    """User ``i``'s position (ids are ``user-000`` ...; other ids hash to a stable slot)."""
    suffix = user.id.rsplit("-", 1)[-1]
    if suffix.isdigit():
        return int(suffix)
    return int(stable_hash("collab-user", user.id)[:6], 16)
