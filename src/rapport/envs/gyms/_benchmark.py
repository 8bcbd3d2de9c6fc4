"""The `gym` benchmark: each user is one environment stream; train episodes, then eval."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rapport.llm import GenerateConfig, Message, ModelOutput, ModelRoles, derive_seed
from rapport.log import (
    MAX_SESSIONS,
    Condition,
    ExperimentConfig,
    RewardEvent,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    Table,
    UserSpec,
)

from .._protocol import AgentRequest, Benchmark, Episode, GenericSetting, SessionLog, paper_data
from ._core import EASY_HORIZON, HORIZON, AnswerRule, Gym
from ._registry import ANSWERED, EASY, GYMS, make_gym
from ._report import report_tables
from ._telepathy import GuessScore
from ._types import GymOutcome, GymTask
from ._userrl import GymDataError, LoadedGym, load_userrl
from ._userrl_gyms import make_userrl_gym


class GymOptions(BaseModel):
    """Options of the gym benchmark (CLI values arrive as strings; unknown names are refused)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    env: list[str] = Field(default_factory=lambda: ["function", "telepathy"], min_length=1)
    """Gyms to run, comma separated: function, telepathy, turtle, intention, travel, ..."""
    train_episodes: int = Field(default=4, ge=0, le=MAX_SESSIONS)
    """Episodes per user that build memory (not reported)."""
    eval_episodes: int = Field(default=4, ge=1, le=MAX_SESSIONS)
    """Held-out episodes per user, memory frozen (reported)."""
    rounds: int = Field(default=5, ge=1, le=MAX_SESSIONS)
    """Train episodes are played in this many rounds (fewer when there are fewer train
    episodes): every stream's episodes of one round, under a condition, before any of the
    next, and eval episodes after all of them. A memory its users share (PRIME) distils and
    evolves once per round."""
    difficulty: Literal["normal", "easy"] = "normal"
    """``easy``: function, telepathy, turtle and intention draw easier episodes (see
    docs/gyms.md) with a default horizon of 8; the other gyms play as normal."""
    horizon: int | None = Field(default=None, ge=1, le=64)
    """Agent turns per episode (default 16, 8 at ``difficulty: easy``)."""
    recall_in: Literal["system", "turn"] = "system"
    """Where a turn's retrieved memory goes: ``system`` (into the system prompt, with the
    memory's context) or ``turn`` (a system message after the conversation, the agent's
    default). The embedded 1.5B model answered at once on 6 of 6 function episodes with
    the note after the conversation, and queried first on 5 of 6 with it in the system
    prompt."""
    repeat_retries: int = Field(default=2, ge=0, le=100)
    """Ask the agent again (temperature 0.8, seeded) when its move repeats an ``[action]`` or
    ``[search]`` it already made this episode, up to this many times per turn (0: never):
    a small model decoding greedily otherwise loops on one move until the turns run out."""
    move_tokens: int = Field(default=200, ge=16, le=2000)
    """Tokens the agent may generate per move: a move takes one line, and a small model
    that goes on to imagine the reply spends the rest (its first move counts)."""
    answers: AnswerRule = "retry"
    """FunctionGym and TurtleGym: ``retry`` (UserRL's rule): an answer short of solving the
    episode does not end it, and each answer is rewarded with its gain over the best so far;
    ``once``: the first answer ends the episode (TelepathyGym always goes on after a wrong
    guess)."""
    telepathy_score: GuessScore = "userrl"
    """TelepathyGym: what a right guess scores: ``userrl`` 1.0 (UserRL's rule);
    ``discounted`` ``1 - 0.5 * questions / horizon``."""
    policy_chars: int = Field(default=1500, ge=0)
    """TauGym: characters of the condensed domain policy shown to the agent (0: none)."""
    gym_data: str | None = Field(
        default=None, json_schema_extra=paper_data("UserRL's published tasks, --gym-data CHECKOUT")
    )
    """A UserRL checkout: play its published tasks (train episodes from its train split,
    eval episodes from its test split) under its scoring rules, the ``user`` model playing
    the user, instead of rapport's own content (function, telepathy, turtle, intention,
    persuade; see docs/gyms.md)."""

    @property
    def turns(self) -> int:
        """The horizon episodes are played at."""
        if self.horizon is not None:
            return self.horizon
        return EASY_HORIZON if self.difficulty == "easy" else HORIZON

    def round_of(self, k: int) -> int:
        """The round train episode ``k`` (from 0) of a stream is played in."""
        return k * min(self.rounds, self.train_episodes) // self.train_episodes

    @model_validator(mode="after")
    def _gym_data_plays_userrl_tasks(self) -> GymOptions:
        if self.gym_data is not None and self.difficulty != "normal":
            raise ValueError("difficulty easy draws rapport's own episodes: not with gym_data")
        return self

    @field_validator("env", mode="before")
    @classmethod
    def _split_env(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return value  # the field's own type check says what is wrong
        unknown = [v for v in value if v not in GYMS]
        if unknown:
            raise ValueError(f"unknown gym {unknown[0]!r} (known: {', '.join(GYMS)})")
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"gym {repeated[0]!r} is listed twice")
        return value


class GymBenchmark(Benchmark):
    """User-centric gyms under the runner: one user = one environment stream."""

    name = "gym"
    options_model = GymOptions
    uses: ClassVar[frozenset[GenericSetting]] = frozenset({"users"})
    metrics = ("reward", "success")
    produces = (GymOutcome,)
    roles = ("user", "judge")

    def __init__(self, options: GymOptions | None = None, seed: int = 0) -> None:
        self.options = options or GymOptions()
        self.seed = seed
        self.streams = 0
        """How many streams `users` made (each round's train episodes over all of them)."""
        self.userrl: dict[str, LoadedGym] = {}
        """UserRL's tasks per gym (``gym_data``, read here: a checkout that cannot be read
        raises `GymDataError`, a ``ValueError``, before a run writes anything), else empty."""
        if self.options.gym_data is not None:
            self.userrl = load_userrl(self.options.gym_data, self.options.env)

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> GymBenchmark:
        """Validate ``config.options`` into `GymOptions`.

        Raises:
            pydantic.ValidationError: an unknown option or a bad value.
        """
        return cls(GymOptions.model_validate(config.options), seed=config.seed)

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """``n`` streams per environment."""
        users = [
            UserSpec(id=f"{env}-{i}", attributes={"env": env, "stream": i})
            for env in self.options.env
            for i in range(n)
        ]
        self.streams = len(users)
        return users

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """Train episodes (memory learns) in rounds, then held-out eval episodes (memory
        frozen) in a phase of their own after every round.

        ``n`` is ignored: the episode counts come from the options.
        """
        env = user.attributes["env"]
        options = self.options
        plan = [("train", k, options.round_of(k)) for k in range(options.train_episodes)]
        rounds = min(options.rounds, options.train_episodes)
        plan += [("eval", k, rounds) for k in range(options.eval_episodes)]
        specs = []
        for index, (split, k, phase) in enumerate(plan):
            episode = derive_seed(seed, f"{user.id}:{split}:{k}")
            task = GymTask(env=env, split=split, episode_seed=episode)
            if env in self.userrl:
                task = self._userrl_task(task, user.attributes["stream"], k, seed)
            specs.append(
                SessionSpec(
                    id=f"{env}:{split}:{episode}",
                    user_id=user.id,
                    index=index,
                    split=split,
                    learn=split == "train",
                    phase=phase,
                    task=task,
                )
            )
        return specs

    def _userrl_task(self, task: GymTask, stream: int, k: int, seed: int) -> GymTask:
        """The UserRL task of a stream's ``k``-th episode of a split: the split's tasks in
        a seeded order, streams taking consecutive runs of it (every stream and episode
        another task until the split's are used up)."""
        pool = self.userrl[task.env].pool(task.split)
        if not pool:
            raise GymDataError(f"--gym-data: UserRL's {task.env} gym has no {task.split} tasks")
        per_stream = (
            self.options.train_episodes if task.split == "train" else self.options.eval_episodes
        )
        order = list(range(len(pool)))
        random.Random(f"{seed}:{task.env}:{task.split}").shuffle(order)
        picked = pool[order[(stream * per_stream + k) % len(pool)]]
        return task.model_copy(update={"task_id": picked["id"], "pool": len(pool)})

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> GymEpisode:
        """One episode of the session's gym (train episodes explore, eval decodes greedily)."""
        task = spec.task_as(GymTask)
        gym = self._gym(task)
        gym.judge = models.get("judge")
        info = SessionInfo(
            index=spec.index,
            benchmark=self.name,
            task=gym.name,
            split=spec.split,
            horizon=gym.horizon,
            **self._round(spec),
        )
        return GymEpisode(gym, task, info, models, self.options)

    def _gym(self, task: GymTask) -> Gym:
        """The episode's gym: the UserRL task it names, or rapport's own."""
        if task.task_id is None:
            options = self._gym_options(task.env)
            return make_gym(task.env, horizon=self.options.turns, split=task.split, **options)
        loaded = self.userrl.get(task.env)
        if loaded is None:
            raise GymDataError(f"the episode plays UserRL task {task.task_id!r}: give gym_data")
        return make_userrl_gym(
            task.env,
            loaded.task(task.split, task.task_id),
            horizon=self.options.turns,
            split=task.split,
            answers=self.options.answers,
            guess_score=self.options.telepathy_score,
        )

    def _round(self, spec: SessionSpec) -> dict[str, int]:
        """Where a session falls in the rounds: ``round`` (its phase; eval episodes come in
        the phase after the last round), ``rounds``, and for a train episode
        ``round_episodes``, the train episodes of its round over every stream (when `users`
        made them)."""
        options = self.options
        rounds = min(options.rounds, options.train_episodes)
        out = {"round": spec.phase, "rounds": rounds}
        if spec.split == "train" and self.streams:
            per_stream = sum(
                options.round_of(k) == spec.phase for k in range(options.train_episodes)
            )
            out["round_episodes"] = per_stream * self.streams
        return out

    def _gym_options(self, env: str) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if env in EASY:
            options["difficulty"] = self.options.difficulty
        if env in ANSWERED:
            options["answers"] = self.options.answers
        if env == "telepathy":
            options["guess_score"] = self.options.telepathy_score
        if env == "tau":
            options["policy_chars"] = self.options.policy_chars
        return options

    def score(self, record: SessionRecord) -> dict[str, float]:
        """``reward``: the trajectory reward in [0, 1]; ``success``: 1 if solved."""
        outcome = record.outcome
        if not isinstance(outcome, GymOutcome):
            return {"reward": 0.0, "success": 0.0}
        return {"reward": outcome.trajectory_reward, "success": float(outcome.success)}

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """Reward by environment and how the eval episodes went."""
        return report_tables(records)


class GymEpisode(Episode):
    """The environment's side of one episode: each agent move is stepped by the gym.

    A move that repeats one already made this episode is asked again (temperature 0.8,
    seeded), up to ``repeat_retries`` times per turn.
    """

    def __init__(
        self, gym: Gym, task: GymTask, info: SessionInfo, models: ModelRoles, options: GymOptions
    ) -> None:
        self.gym, self.task, self.info, self.options = gym, task, info, options
        self.user = models.get("user")
        self.history: list[Message] = []
        self.resampled = 0

    async def start(self, log: SessionLog) -> None:
        opening = self.gym.reset(self.task.episode_seed)
        self.history.append(Message(role="user", content=opening))
        log.say("user", opening)
        self.done = self.gym.done

    def request(self) -> AgentRequest:
        return AgentRequest(
            messages=list(self.history),
            instructions=self.gym.prompt(),
            config=_sampling(
                self.task.split == "train",
                self.task.episode_seed,
                self.gym.turn,
                self.options.move_tokens,
            ),
            recall_in=self.options.recall_in,
        )

    def retry(self, output: ModelOutput, attempt: int) -> GenerateConfig | None:
        if attempt >= self.options.repeat_retries or not self.gym.repeats(output.text):
            return None
        self.resampled += 1
        return _resampling(
            self.task.episode_seed, self.gym.turn, attempt + 1, self.options.move_tokens
        )

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        move = self.gym.move_text(output.text)
        step = await self.gym.astep(output.text, self.user)
        self.history += [
            Message(role="assistant", content=move),
            Message(role="user", content=step.observation),
        ]
        turn = log.say("agent", output.text)
        log.say("user", step.observation)
        log.event(RewardEvent(turn=turn, reward=step.reward, move=move))
        self.done = self.gym.done

    def outcome(self) -> GymOutcome:
        gym = self.gym
        return GymOutcome(
            env=gym.name,
            trajectory_reward=gym.trajectory_reward,
            success=gym.success,
            turns_used=gym.turn,
            horizon=gym.horizon,
            episode_seed=self.task.episode_seed,
            hidden=_jsonable(gym.hidden()),
            secrets=gym.secrets(),
            rules=gym.instructions,
            moves=list(gym.examples.values()),
            talks=gym.talks,
            resampled=self.resampled,
            task_id=self.task.task_id,
            pool=self.task.pool,
        )


def _sampling(explore: bool, episode_seed: int, turn: int, tokens: int) -> GenerateConfig:
    """Train episodes explore at temperature 1.0, each episode and turn with its own seed
    (the same prompt in two episodes must not replay one sample); eval decodes greedily."""
    if not explore:
        return GenerateConfig(temperature=0.0, max_tokens=tokens)
    return GenerateConfig(
        temperature=1.0, max_tokens=tokens, seed=derive_seed(episode_seed, f"turn:{turn}")
    )


def _resampling(episode_seed: int, turn: int, attempt: int, tokens: int) -> GenerateConfig:
    """A fresh sample for a move that repeated an earlier one (its own seed per attempt)."""
    return GenerateConfig(
        temperature=0.8,
        max_tokens=tokens,
        seed=derive_seed(episode_seed, f"turn:{turn}:repeat:{attempt}"),
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)
