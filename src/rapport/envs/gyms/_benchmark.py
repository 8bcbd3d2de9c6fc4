"""The `gym` benchmark: each user is one environment stream; train episodes, then eval."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar

from rapport.llm import GenerateConfig, Message, ModelOutput, ModelRoles, derive_seed
from rapport.log import (
    Condition,
    ExperimentConfig,
    RewardEvent,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    Table,
    UserSpec,
)

from .._presets import Preset
from .._protocol import AgentRequest, Benchmark, Episode, GenericSetting, SessionLog
from ._core import Gym
from ._options import (
    EVAL_EPISODES,
    EVAL_TEMPERATURE,
    EXPLORE_TEMPERATURE,
    PAPER_PROTOCOL,
    SMALL_OPTIONS,
    GymOptions,
)
from ._registry import ANSWERED, EASY, make_gym
from ._report import report_tables
from ._types import GymOutcome, GymTask
from ._userrl import GymDataError, LoadedGym, load_userrl
from ._userrl_players import make_userrl_gym

SMALL_PRESET = Preset(
    name="small",
    summary="Small embedded models, in the gyms: a lenient move reader, repeated moves "
    "asked again, 200-token moves.",
    options={"gym": SMALL_OPTIONS},
)
"""The gyms' part of ``--preset small`` (the benchmarks' parts are merged by name)."""


class GymBenchmark(Benchmark):
    """User-centric gyms under the runner: one user = one environment stream."""

    name = "gym"
    options_model = GymOptions
    uses: ClassVar[frozenset[GenericSetting]] = frozenset({"users"})
    metrics = ("reward", "success")
    produces = (GymOutcome,)
    roles = ("user", "judge")
    paper_protocol = PAPER_PROTOCOL
    presets = (SMALL_PRESET,)

    def __init__(self, options: GymOptions | None = None, seed: int = 0) -> None:
        self.options = options or GymOptions()
        self.seed = seed
        self.streams = 0
        """How many streams `users` made (each round's train episodes over all of them)."""
        self.per_env = 1
        """Streams per environment (`users`' ``n``): how a test split is dealt out."""
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
        self.streams, self.per_env = len(users), n
        return users

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """Train episodes (memory learns) in rounds, then held-out eval episodes (memory
        frozen) in a phase of their own after every round.

        ``n`` is ignored: the episode counts come from the options.
        """
        env = user.attributes["env"]
        stream = int(user.attributes["stream"])
        options = self.options
        plan = [("train", k, options.round_of(k)) for k in range(options.train_episodes)]
        plan += [("eval", k, options.round_count) for k in range(self._eval_count(env, stream))]
        specs = []
        for index, (split, k, phase) in enumerate(plan):
            episode = derive_seed(seed, f"{user.id}:{split}:{k}")
            task = GymTask(env=env, split=split, episode_seed=episode)
            if env in self.userrl:
                task = self._userrl_task(task, stream, k, seed)
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

    def _eval_count(self, env: str, stream: int) -> int:
        """A stream's eval episodes: of UserRL's test split, its share of the tasks dealt
        over the streams in the split's order (tasks ``stream``, ``stream + streams``, ...),
        all of it or the first ``eval_episodes``; of rapport's own, ``eval_episodes``."""
        if env in self.userrl:
            share = len(self.userrl[env].test[stream :: self.per_env])
            return (
                share
                if self.options.eval_episodes is None
                else min(share, self.options.eval_episodes)
            )
        return self.options.eval_episodes or EVAL_EPISODES

    def _userrl_task(self, task: GymTask, stream: int, k: int, seed: int) -> GymTask:
        """The UserRL task of a stream's ``k``-th episode of a split. Eval: the test
        split's tasks in its order, dealt over the streams (UserRL's evaluation plays each
        once). Train: the split's tasks in a seeded order, streams taking consecutive runs
        of it (every stream and episode another task until the split's are used up)."""
        pool = self.userrl[task.env].pool(task.split)
        if not pool:
            raise GymDataError(f"--gym-data: UserRL's {task.env} gym has no {task.split} tasks")
        if task.split == "eval":
            picked = pool[stream + k * self.per_env]
        else:
            order = list(range(len(pool)))
            random.Random(f"{seed}:{task.env}:{task.split}").shuffle(order)
            picked = pool[order[(stream * self.options.train_episodes + k) % len(pool)]]
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
            moves=self.options.moves,
        )

    def _round(self, spec: SessionSpec) -> dict[str, int]:
        """Where a session falls in the rounds: ``round`` (its phase; eval episodes come in
        the phase after the last round), ``rounds``, and for a train episode
        ``round_episodes``, the train episodes of its round over every stream (when `users`
        made them)."""
        options = self.options
        out = {"round": spec.phase, "rounds": options.round_count}
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
        """``reward``: the episode's score (UserRL's: the sum of its turn rewards; in
        [0, 1] but for intention and persuade); ``success``: 1 if solved."""
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
            score=gym.gym_score,
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
        return GenerateConfig(temperature=EVAL_TEMPERATURE, max_tokens=tokens)
    return GenerateConfig(
        temperature=EXPLORE_TEMPERATURE,
        max_tokens=tokens,
        seed=derive_seed(episode_seed, f"turn:{turn}"),
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
