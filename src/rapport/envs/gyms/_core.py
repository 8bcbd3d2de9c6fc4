"""The action interface, step results and the base class every gym shares."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rapport.llm import Model

ActionKind = Literal["action", "search", "answer", "finish", "invalid"]
HORIZON = 16
"""Default number of agent turns in an episode."""

_TAG = re.compile(r"\[(action|search|answer|finish)\]", re.IGNORECASE)
FORMAT_RULE = (
    "Reply with exactly one move per message: a line that starts with its tag, for example "
    "`[action] ...`, `[search] ...`, `[answer] ...` or `[finish]`."
)


@dataclass(frozen=True)
class Action:
    """One parsed agent move: ``[action] text``, ``[search] q``, ``[answer] text``, ``[finish]``."""

    kind: ActionKind
    text: str = ""


def parse_action(message: str) -> Action:
    """Parse an agent message: the last tag in it wins, so a reasoning preamble is allowed.

    The move's text runs from the tag to the end of the message (quotes and code ticks
    around it are dropped).
    """
    matches = list(_TAG.finditer(message))
    if not matches:
        return Action(kind="invalid", text=message.strip())
    last = matches[-1]
    text = message[last.end() :].strip().strip("`\"'").strip()
    return Action(kind=last.group(1).lower(), text=text)  # type: ignore[arg-type]


@dataclass
class Step:
    """What one step returns: the environment's reply, this turn's reward, and whether it ended."""

    observation: str
    reward: float = 0.0
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Gym:
    """Base class: one episode at a time, code-decided wherever possible.

    Subclasses set ``name`` and ``instructions`` and implement ``_start`` (draw an episode),
    ``_act``, ``_search``, ``_answer``. ``trajectory_reward`` is the episode's score in [0, 1].
    Gyms that sometimes need a model (a user simulator or a judge) override ``astep``.

    Args:
        horizon: agent turns before the episode is cut off.
        split: ``train`` or ``eval``: gyms with written content draw from disjoint pools.
    """

    name: ClassVar[str] = "gym"
    instructions: ClassVar[str] = ""

    def __init__(self, horizon: int = HORIZON, split: str = "train") -> None:
        self.horizon = horizon
        self.split = split
        self.turn = 0
        self.done = False
        self.score = 0.0
        self.rewards: list[float] = []
        self.rng = random.Random(0)
        self.judge: Model | None = None
        """A judge model for gyms whose final answer needs one (set by the runner)."""

    def reset(self, seed: int) -> str:
        """Start the episode a seed names (same seed, same episode); returns the first message."""
        self.rng = random.Random(f"{self.name}:{self.split}:{seed}")
        self.turn, self.done, self.score, self.rewards = 0, False, 0.0, []
        return self._start()

    def step(self, message: str) -> Step:
        """Apply one agent message (code only: no model)."""
        return self._finish_step(self._dispatch(parse_action(message)))

    async def astep(self, message: str, model: Model | None = None) -> Step:
        """Like `step`, but may ask ``model`` (user simulator / judge) where code cannot decide."""
        return self.step(message)

    @property
    def trajectory_reward(self) -> float:
        """The episode's score in [0, 1] (final once ``done``)."""
        return self.score

    @property
    def success(self) -> bool:
        """Whether the episode counts as solved."""
        return self.score >= 0.7

    def prompt(self) -> str:
        """The agent's instructions: the gym's rules plus the shared move format."""
        return f"{self.instructions}\n{FORMAT_RULE}"

    def hidden(self) -> dict[str, Any]:
        """The episode's hidden state (for scripted policies, tests and the run log)."""
        return {}

    def _dispatch(self, action: Action) -> Step:
        if self.done:
            return Step("The episode is over.", done=True)
        if action.kind == "action":
            return self._act(action.text)
        if action.kind == "search":
            return self._search(action.text)
        if action.kind == "answer":
            return self._answer(action.text)
        if action.kind == "finish":
            return self._finish()
        return Step("Unrecognized move. " + FORMAT_RULE)

    def _finish_step(self, step: Step) -> Step:
        self.turn += 1
        if self.turn >= self.horizon and not step.done:
            step = Step(
                step.observation + "\n(The turn limit is reached.)",
                step.reward,
                True,
                {**step.info, "truncated": True},
            )
            self._on_timeout()
        self.done = self.done or step.done
        self.rewards.append(step.reward)
        step.info.setdefault("turn", self.turn - 1)
        return step

    def _start(self) -> str:
        raise NotImplementedError

    def _act(self, text: str) -> Step:
        return Step("This environment has no [action] move here.")

    def _search(self, query: str) -> Step:
        return Step("This environment has no [search] tool.")

    def _answer(self, text: str) -> Step:
        return Step("This environment takes no [answer].")

    def _finish(self) -> Step:
        return Step("Episode finished.", done=True)

    def _on_timeout(self) -> None:
        """Called when the horizon cuts the episode off (score what exists)."""


def words(text: str) -> set[str]:
    """Lower-case word set of a text (for keyword matching)."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def normalize(text: str) -> str:
    """Lower-case, strip punctuation and articles: the exact-match form of an answer."""
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return " ".join(t for t in tokens if t not in {"a", "an", "the"})
