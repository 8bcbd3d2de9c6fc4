"""The gym benchmark's options, and what the PRIME paper and UserRL's evaluation fix.

The rows of `PAPER_PROTOCOL` are the PRIME paper's (arXiv 2604.07645) §4.1 and Appendix D,
Tables 2-3, and UserRL's evaluation (``eval/eval.py``, ``eval/eval.sh`` of
SalesforceAIResearch/UserRL), whose numbers the paper's Table 1 reports.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rapport.log import MAX_SESSIONS, ExperimentConfig
from rapport.memory import prime

from .._paper import PaperSetting, at_least, memory_option, model_of, option
from .._protocol import paper_data
from ._core import EASY_HORIZON, HORIZON, AnswerRule
from ._registry import GYMS
from ._telepathy import GuessScore
from ._userrl_gyms import MoveReading, UserRLTurtleGym

EVAL_EPISODES = 4
"""Eval episodes per stream of rapport's own gyms (and of UserRL's with a count given)."""
EVAL_TEMPERATURE = 0.0
"""Eval episodes decode greedily (UserRL's eval.sh: --temperature 0)."""
EXPLORE_TEMPERATURE = 1.0
"""Train episodes explore at this temperature (the PRIME paper's §4.1)."""


class GymOptions(BaseModel):
    """Options of the gym benchmark (CLI values arrive as strings; unknown names are refused)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    env: list[str] = Field(default_factory=lambda: ["function", "telepathy"], min_length=1)
    """Gyms to run, comma separated: function, telepathy, turtle, intention, travel, ..."""
    train_episodes: int = Field(default=4, ge=0, le=MAX_SESSIONS)
    """Episodes per stream (user) that build memory (not reported); the paper explores 100
    per environment (users x train_episodes; configs/prime-gyms.yaml runs that)."""
    eval_episodes: int | None = Field(default=None, ge=1, le=MAX_SESSIONS)
    """Held-out episodes per stream, memory frozen (reported). With ``gym_data`` the tasks
    of UserRL's test split are dealt over the streams in the split's order: None plays
    each once (UserRL's evaluation), a number at most that many per stream (the first
    ones). Without it, None is 4."""
    rounds: int = Field(default=5, ge=1, le=MAX_SESSIONS)
    """Train episodes are played in this many rounds (fewer when there are fewer train
    episodes): every stream's episodes of one round, under a condition, before any of the
    next, and eval episodes after all of them. A memory its users share (PRIME) distils and
    evolves once per round: the paper's N = 5 evolution iterations."""
    difficulty: Literal["normal", "easy"] = "normal"
    """``easy``: function, telepathy, turtle and intention draw easier episodes (see
    docs/gyms.md) with a default horizon of 8; the other gyms play as normal."""
    horizon: int | None = Field(default=None, ge=1, le=64)
    """Agent turns per episode (default 16, 8 at ``difficulty: easy``)."""
    recall_in: Literal["system", "turn"] = "system"
    """Where a turn's retrieved memory goes: ``system`` (into the system prompt, with the
    memory's context, as the paper's Fig. 10 augments the base prompt) or ``turn`` (a
    system message after the conversation)."""
    repeat_retries: int = Field(default=0, ge=0, le=100)
    """Ask the agent again (temperature 0.8, seeded) when its move repeats an ``[action]`` or
    ``[search]`` it already made this episode, up to this many times per turn (0: never, as
    UserRL; the ``small`` preset sets 2: a small model decoding greedily otherwise loops
    on one move until the turns run out)."""
    move_tokens: int = Field(default=2048, ge=16, le=8192)
    """Tokens the agent may generate per move (UserRL's evaluation: 2,048; the ``small``
    preset sets 200: a small model that goes on to imagine the reply spends the rest)."""
    moves: MoveReading = "userrl"
    """How a UserRL task's gym reads a message as a move (``gym_data``): ``userrl`` as
    UserRL's environments do (the tag first, lower case; the ``[answer]`` of FunctionGym
    is ``float()`` of the rest; no notes on repeats or turns left); ``lenient`` (the
    ``small`` preset) rapport's reader: any case, labels, synonyms, the first move at a
    line start, and those notes."""
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

    @property
    def every_test_task(self) -> bool:
        """Whether eval plays each task of UserRL's test split once (UserRL's evaluation)."""
        return self.gym_data is not None and self.eval_episodes is None

    @property
    def round_count(self) -> int:
        """The rounds train episodes are played in (at most one per train episode)."""
        return min(self.rounds, self.train_episodes)

    def round_of(self, k: int) -> int:
        """The round train episode ``k`` (from 0) of a stream is played in."""
        return k * self.round_count // self.train_episodes

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


SMALL_OPTIONS: dict[str, Any] = {"moves": "lenient", "repeat_retries": 2, "move_tokens": 200}
"""The gym's part of the ``small`` preset: rapport's lenient move reader with its notes,
a repeated move asked again, and 200-token moves."""


def _options(config: ExperimentConfig) -> GymOptions:
    return GymOptions.model_validate(config.options)


def _eval_plan(config: ExperimentConfig) -> str:
    o = _options(config)
    if o.every_test_task:
        return "each test task once"
    if o.gym_data:
        return f"the first {o.eval_episodes} test tasks per stream, once each"
    return f"{o.eval_episodes or EVAL_EPISODES} per stream of rapport's own content"


def _served(_paper: Any, value: Any) -> bool:
    return isinstance(value, str) and value.startswith("openai/")


_USERRL = "UserRL eval/eval.py"
_SERVED = "a model served behind an OpenAI-compatible endpoint: --model ROLE=openai/NAME"

EVALUATION: tuple[PaperSetting, ...] = (
    PaperSetting(
        "tasks",
        "UserRL's published tasks",
        "§4.1",
        "options.gym_data",
        lambda c: "UserRL's published tasks" if _options(c).gym_data else "rapport's own",
        "--gym-data CHECKOUT: a UserRL checkout the user supplies (search, travel and tau "
        "are not played from it; docs/gyms.md says why)",
    ),
    PaperSetting(
        "eval tasks",
        "each test task once",
        f"Table 1; {_USERRL} (pass_k 1)",
        "options.eval_episodes",
        _eval_plan,
    ),
    PaperSetting(
        "max turns (horizon H)",
        16,
        "Table 2; eval/eval.sh --max_turns 16",
        "options.horizon",
        lambda c: _options(c).turns,
    ),
    PaperSetting(
        "agent output tokens per move",
        2048,
        f"{_USERRL} (max_tokens=2048)",
        "options.move_tokens",
        option(GymOptions, "move_tokens"),
    ),
    PaperSetting(
        "eval temperature",
        0.0,
        "eval/eval.sh --temperature 0",
        "(fixed)",
        lambda c: EVAL_TEMPERATURE,
    ),
    PaperSetting(
        "exploration temperature",
        1.0,
        "§4.1",
        "(fixed)",
        lambda c: EXPLORE_TEMPERATURE,
    ),
    PaperSetting(
        "reading a move",
        "userrl",
        "gyms/*/env/*_env.py step()",
        "options.moves",
        option(GymOptions, "moves"),
        "the message must start with its tag, as UserRL's environments read it",
    ),
    PaperSetting(
        "re-asking a repeated move",
        0,
        _USERRL,
        "options.repeat_retries",
        option(GymOptions, "repeat_retries"),
    ),
    PaperSetting(
        "episode score",
        "sum of turn rewards",
        f"{_USERRL} post_process_results",
        "(fixed)",
        lambda c: "sum of turn rewards",
        "IntentionGym's sum is uncapped (Table 1: ~1.6-1.9), PersuadeGym's too",
    ),
    PaperSetting(
        "TurtleGym solved at",
        1.0,
        f"{_USERRL} (success_threshold = 1.0)",
        "(fixed)",
        lambda c: UserRLTurtleGym.solved_at,
    ),
    PaperSetting(
        "user simulator",
        "Qwen3-32B",
        "§4.1",
        "models.user",
        model_of("user"),
        _SERVED,
        matches=_served,
    ),
)
"""How the paper's numbers are measured: UserRL's evaluation."""


def _explored(config: ExperimentConfig) -> int:
    return config.users * _options(config).train_episodes


_EVOLVE = prime.EvolutionSettings()
PRIME_CREDIT = {"turtle": "R2G", "function": "R2G", "intention": "Equalized", "travel": "Equalized"}


def _credit(config: ExperimentConfig) -> dict[str, str]:
    table = prime.credit_table(memory_option("prime", "credit")(config))
    return {env: table[env] for env in PRIME_CREDIT}


def _prime(name: str) -> Any:
    """A PRIME option as a run lays it, its `PrimeOptions` default where none is given."""
    layered = memory_option("prime", name, None)

    def read(config: ExperimentConfig) -> Any:
        value = layered(config)
        return prime.PrimeOptions.model_fields[name].default if value is None else value

    return read


TRAINING: tuple[PaperSetting, ...] = (
    PaperSetting(
        "episodes per env (exploration)",
        100,
        "Table 2",
        "users x options.train_episodes",
        _explored,
        "configs/prime-gyms.yaml runs 4 streams x 25",
        matches=at_least,
    ),
    PaperSetting(
        "evolution iterations N",
        5,
        "Table 3",
        "options.rounds",
        lambda c: _options(c).round_count,
    ),
    PaperSetting(
        "credit method",
        PRIME_CREDIT,
        "App. D",
        "memory_options.prime.credit",
        _credit,
        "telepathy, persuade, search and tau are not named by the paper: R2G (their turns "
        "build on each other; see docs/gyms.md)",
    ),
    PaperSetting(
        "trajectory reward R(tau)",
        "score",
        "Fig. 1, 6-9",
        "memory_options.prime.trajectory_reward",
        _prime("trajectory_reward"),
        "the gym's score in [0, 1]: 1.00, 1.00, 0.76, 0.83, 0.25 in the worked examples",
    ),
    PaperSetting(
        "distiller writes",
        "all",
        "Eq. 6-8",
        "memory_options.prime.distill_fields",
        _prime("distill_fields"),
        "default lesson: the model writes the lesson, and situation, action and outcome "
        "come from the log at the key turn (a small distiller gets them wrong); all: it "
        "writes those and the preconditions; stage and turn range are set by code",
    ),
    PaperSetting(
        "distillation LLM",
        "GPT-4o",
        "Table 2",
        "models.memory",
        model_of("memory"),
        _SERVED,
        matches=_served,
    ),
    PaperSetting(
        "key turns K", 3, "Table 2", "memory_options.prime.key_turns", _prime("key_turns")
    ),
    PaperSetting("discount gamma", 0.8, "Table 2", "(fixed)", lambda c: prime.GAMMA),
    PaperSetting(
        "zone thresholds",
        [0.7, 0.3],
        "Table 2",
        "(fixed)",
        lambda c: [prime.GOLDEN_AT, prime.WARNING_AT],
    ),
    PaperSetting(
        "stage boundaries", [0.25, 0.75], "Table 2", "(fixed)", lambda c: list(prime.STAGE_BOUNDS)
    ),
    PaperSetting(
        "retrieval count k", 3, "Table 2", "memory_options.prime.select_k", _prime("select_k")
    ),
    PaperSetting(
        "candidates offered to selection",
        20,
        "§4.1",
        "memory_options.prime.max_candidates",
        _prime("max_candidates"),
    ),
    PaperSetting(
        "similarity threshold",
        0.6,
        "Table 2",
        "memory_options.prime.min_similarity",
        _prime("min_similarity"),
        "offline, MiniLM (384-d) takes 0.75, measured for its scale "
        "(benchmarks/prime_threshold.py); 0.6 is set for text-embedding-3-small",
        matches=lambda p, v: v in (p, "paper"),
    ),
    PaperSetting(
        "embedding model",
        "text-embedding-3-small",
        "Table 2",
        "memory_options.prime.embedder",
        _prime("embedder"),
        "not built: rapport has no OpenAI-compatible /embeddings client yet; the offline "
        "default is MiniLM (all-MiniLM-L6-v2, 384-d), with its measured threshold 0.75",
        matches=lambda p, v: isinstance(v, str) and v.endswith(p),
    ),
    PaperSetting(
        "mutation / generalization / crossover p",
        [0.10, 0.05, 0.02],
        "Table 3",
        "(fixed)",
        lambda c: [_EVOLVE.p_mutation, _EVOLVE.p_generalization, _EVOLVE.p_crossover],
    ),
    PaperSetting(
        "generalization threshold", 0.7, "Table 3", "(fixed)", lambda c: _EVOLVE.general_success
    ),
    PaperSetting(
        "pruning interval",
        2,
        "Table 3",
        "memory_options.prime.prune_every",
        _prime("prune_every"),
    ),
    PaperSetting(
        "prune: usage threshold", 2, "Table 3", "(fixed)", lambda c: _EVOLVE.min_retrievals
    ),
    PaperSetting(
        "prune: success threshold", 0.3, "Table 3", "(fixed)", lambda c: _EVOLVE.min_success
    ),
    PaperSetting(
        "meta-temperature",
        [1.0, 0.1],
        "Table 3",
        "(fixed)",
        lambda c: [_EVOLVE.t_start, _EVOLVE.t_end],
    ),
)
"""PRIME's exploration, distillation, evolution and inference (App. D, Tables 2-3)."""

PAPER_PROTOCOL: tuple[PaperSetting, ...] = EVALUATION + TRAINING
