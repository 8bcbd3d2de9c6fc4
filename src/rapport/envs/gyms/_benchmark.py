"""The `gym` benchmark: each user is one environment stream; train episodes, then eval."""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rapport.agents import Agent
from rapport.llm import GenerateConfig, Message, ModelError, ModelRoles, derive_seed, record_calls
from rapport.log import (
    ErrorEvent,
    ExperimentConfig,
    RecallEvent,
    RewardEvent,
    SessionRecord,
    Turn,
)
from rapport.memory import Memory, SessionInfo

from .._protocol import Condition, SessionSpec, UserSpec
from ._core import HORIZON, Gym
from ._registry import GYMS, make_gym
from ._report import report_tables


class GymOptions(BaseModel):
    """Options of the gym benchmark (CLI values arrive as strings; unknown names are refused)."""

    model_config = ConfigDict(extra="forbid")

    env: list[str] = Field(default_factory=lambda: ["function", "telepathy"])
    """Gyms to run, comma separated: function, telepathy, turtle, intention, travel, ..."""
    train_episodes: int = Field(default=4, ge=0)
    """Episodes per user that build memory (not reported)."""
    eval_episodes: int = Field(default=4, ge=1)
    """Held-out episodes per user, memory frozen (reported)."""
    horizon: int = Field(default=HORIZON, ge=1, le=64)
    """Agent turns per episode."""
    recall_in: Literal["system", "turn"] = "system"
    """Where a turn's retrieved memory goes: ``system`` (into the system prompt, with the
    memory's context) or ``turn`` (a system message after the conversation, the agent's
    default). The embedded 1.5B model answered at once on 6 of 6 function episodes with
    the note after the conversation, and queried first on 5 of 6 with it in the system
    prompt."""
    repeat_retries: int = Field(default=2, ge=0)
    """Ask the agent again (temperature 0.8, seeded) when its move repeats an ``[action]`` or
    ``[search]`` it already made this episode, up to this many times per turn (0: never):
    a small model decoding greedily otherwise loops on one move until the turns run out."""
    policy_chars: int = Field(default=1500, ge=0)
    """TauGym: characters of the condensed domain policy shown to the agent (0: none)."""

    @field_validator("env", mode="before")
    @classmethod
    def _split_env(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        unknown = [v for v in value if v not in GYMS]
        if unknown:
            raise ValueError(f"unknown gym {unknown[0]!r} (known: {', '.join(GYMS)})")
        return value


class GymBenchmark:
    """User-centric gyms under the runner: one user = one environment stream."""

    name = "gym"
    metrics: ClassVar[list[str]] = ["reward", "success"]
    report_tables = staticmethod(report_tables)

    def __init__(self, options: GymOptions | None = None, seed: int = 0) -> None:
        self.options = options or GymOptions()
        self.seed = seed

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> GymBenchmark:
        """Validate ``config.options`` into `GymOptions`.

        Raises:
            pydantic.ValidationError: an unknown option or a bad value.
        """
        return cls(GymOptions.model_validate(config.options), seed=config.seed)

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """``n`` streams per environment."""
        return [
            UserSpec(id=f"{env}-{i}", attributes={"env": env, "stream": i})
            for env in self.options.env
            for i in range(n)
        ]

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """Train episodes (memory learns) then held-out eval episodes (memory frozen).

        ``n`` is ignored: the episode counts come from the options.
        """
        env = user.attributes["env"]
        plan = [("train", k) for k in range(self.options.train_episodes)]
        plan += [("eval", k) for k in range(self.options.eval_episodes)]
        specs = []
        for index, (split, k) in enumerate(plan):
            episode = derive_seed(seed, f"{user.id}:{split}:{k}")
            specs.append(
                SessionSpec(
                    id=f"{env}:{split}:{episode}",
                    user_id=user.id,
                    index=index,
                    split=split,
                    learn=split == "train",
                    task={"env": env, "split": split, "episode_seed": episode},
                )
            )
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
        """Play one episode: memory context, then per turn recall -> agent -> environment."""
        gym = make_gym(
            spec.task["env"],
            horizon=self.options.horizon,
            split=spec.task["split"],
            **self._gym_options(spec.task["env"]),
        )
        record = SessionRecord(
            condition=condition.name,
            user_id=user.id,
            index=spec.index,
            spec_id=spec.id,
            split=spec.split,
        )
        with record_calls() as calls:
            try:
                await self._play(gym, spec, user, agent, memory, models, record)
            except ModelError as exc:
                record.status = "error"
                record.events.append(ErrorEvent(where="agent", message=str(exc)[:500]))
        record.usage = list(calls)
        record.outcome |= {
            "env": gym.name,
            "trajectory_reward": gym.trajectory_reward,
            "success": gym.success,
            "turns_used": gym.turn,
            "horizon": gym.horizon,
            "episode_seed": spec.task["episode_seed"],
            "hidden": _jsonable(gym.hidden()),
            "secrets": gym.secrets(),
            "rules": gym.instructions,
            "moves": list(gym.examples.values()),
            "talks": gym.talks,
        }
        record.finished_at = time.time()
        return record

    def _memory_parts(self, context: str, recall: str) -> tuple[str, str]:
        """The agent's ``memory_context`` and ``recall`` (see ``GymOptions.recall_in``)."""
        if self.options.recall_in == "turn" or not recall.strip():
            return context, recall
        notes = "Notes relevant right now:\n" + recall.strip()
        return f"{context.strip()}\n\n{notes}".strip(), ""

    def _gym_options(self, env: str) -> dict[str, Any]:
        return {"policy_chars": self.options.policy_chars} if env == "tau" else {}

    async def _play(
        self,
        gym: Gym,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        record: SessionRecord,
    ) -> None:
        ref = user.ref()
        info = SessionInfo(
            index=spec.index,
            benchmark=self.name,
            task=gym.name,
            attributes={"env": gym.name, "split": spec.split, "horizon": gym.horizon},
        )
        context = await memory.context(ref, info)
        history = [Message(role="user", content=gym.reset(spec.task["episode_seed"]))]
        record.turns.append(Turn(index=0, speaker="user", text=history[0].content))
        gym.judge = models.get("judge")
        explore = spec.split == "train"
        record.outcome["resampled"] = 0
        while not gym.done:
            recall = await memory.recall(ref, history)
            agent_turn = len(record.turns)
            if recall:
                record.events.append(RecallEvent(turn=agent_turn, text=recall))
            config = _sampling(explore, spec.task["episode_seed"], gym.turn)
            memory_context, turn_recall = self._memory_parts(context, recall)
            for attempt in range(self.options.repeat_retries + 1):
                if attempt:
                    record.outcome["resampled"] += 1
                    config = _resampling(spec.task["episode_seed"], gym.turn, attempt)
                out = await agent.respond(
                    history,
                    instructions=gym.prompt(),
                    memory_context=memory_context,
                    recall=turn_recall,
                    config=config,
                )
                if not gym.repeats(out.text):
                    break
            move = gym.move_text(out.text)
            step = await gym.astep(out.text, models.get("user"))
            history += [
                Message(role="assistant", content=move),
                Message(role="user", content=step.observation),
            ]
            record.turns += [
                Turn(index=agent_turn, speaker="agent", text=out.text),
                Turn(index=agent_turn + 1, speaker="user", text=step.observation),
            ]
            record.events.append(RewardEvent(turn=agent_turn, reward=step.reward, move=move))

    def score(self, record: SessionRecord) -> dict[str, float]:
        """``reward``: the trajectory reward in [0, 1]; ``success``: 1 if solved."""
        return {
            "reward": float(record.outcome.get("trajectory_reward", 0.0)),
            "success": float(bool(record.outcome.get("success", False))),
        }


def _sampling(explore: bool, episode_seed: int, turn: int) -> GenerateConfig:
    """Train episodes explore at temperature 1.0, each episode and turn with its own seed
    (the same prompt in two episodes must not replay one sample); eval decodes greedily."""
    if not explore:
        return GenerateConfig(temperature=0.0, max_tokens=200)
    return GenerateConfig(
        temperature=1.0, max_tokens=200, seed=derive_seed(episode_seed, f"turn:{turn}")
    )


def _resampling(episode_seed: int, turn: int, attempt: int) -> GenerateConfig:
    """A fresh sample for a move that repeated an earlier one (its own seed per attempt)."""
    return GenerateConfig(
        temperature=0.8,
        max_tokens=200,
        seed=derive_seed(episode_seed, f"turn:{turn}:repeat:{attempt}"),
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)
