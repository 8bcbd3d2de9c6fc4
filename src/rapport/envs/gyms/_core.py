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

_SYNONYMS = {
    "ask": "action",
    "question": "action",
    "query": "action",
    "guess": "answer",
    "final answer": "answer",
}
_NAMES = "action|search|answer|finish|ask|question|query|guess|final answer"
_TAG = re.compile(rf"\[\s*({_NAMES})\s*\]", re.IGNORECASE)
_LABEL = re.compile(
    rf"^[ \t>#*_`-]*({_NAMES})[*_`]*[ \t]*(?::|-(?=\s))[*_`]*", re.IGNORECASE | re.MULTILINE
)
_SINGLE_LINE = {"action", "search"}
FORMAT_RULE = (
    "Reply with exactly one move per message, on a line that starts with its tag in square "
    "brackets: `[action] ...`, `[search] ...`, `[answer] ...` or `[finish]`. Write nothing "
    "after the move."
)


@dataclass(frozen=True)
class Action:
    """One parsed agent move: ``[action] text``, ``[search] q``, ``[answer] text``, ``[finish]``."""

    kind: ActionKind
    text: str = ""


def parse_action(message: str) -> Action:
    """Parse an agent message: the last tag in it wins, so a reasoning preamble is allowed.

    Lenient with what small models write: any case, a colon after the tag, bold or code
    marks around it, ``Answer: ...`` labels at a line start when no bracketed tag is
    present, and the synonyms ask / question / query (``action``) and guess / final answer
    (``answer``). An ``[action]`` or ``[search]`` move is its first line (a model that goes
    on to imagine the reply is cut off); an ``[answer]`` runs to the end of the message.
    """
    matches = list(_TAG.finditer(message)) or list(_LABEL.finditer(message))
    if not matches:
        return Action(kind="invalid", text=message.strip())
    last = matches[-1]
    name = " ".join(last.group(1).lower().split())
    kind = _SYNONYMS.get(name, name)
    text = message[last.end() :].lstrip(" \t:*_`-").strip()
    if kind in _SINGLE_LINE:
        text = text.split("\n", 1)[0].strip()
    return Action(kind=kind, text=text.strip("`\"'*").strip())  # type: ignore[arg-type]


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
    examples: ClassVar[dict[str, str]] = {}
    """One concrete example per move the gym takes (move kind -> a full message)."""
    final_move: ClassVar[str] = "answer"
    """The move that closes an episode; the last turns remind the agent of it."""

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
        return self._finish_step(self._dispatch(self.parse(message)))

    def parse(self, message: str) -> Action:
        """`parse_action`, then the gym's own reading of an untagged message (if any)."""
        action = parse_action(message)
        if action.kind == "invalid":
            return self._coerce(message) or action
        return action

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
        """The agent's instructions: the gym's rules, the move format and an example of each."""
        lines = [self.instructions, FORMAT_RULE]
        if self.examples:
            lines.append("Examples of moves:")
            lines += [f"  {example}" for example in self.examples.values()]
        return "\n".join(lines)

    def reminder(self) -> str:
        """What the last turns add to the observation: how many turns remain, and how to end."""
        left = self.horizon - self.turn
        if self.done or left > 2:
            return ""
        example = self.examples.get(self.final_move, f"[{self.final_move}] ...")
        when = "This is your last turn" if left == 1 else f"{left} turns left"
        return f"\n({when}: end with your {self.final_move} now, e.g. `{example}`.)"

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
        example = next(iter(self.examples.values()), "")
        return Step(
            "Unrecognized move. " + FORMAT_RULE + (f" For example: `{example}`" if example else "")
        )

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
        if not self.done:
            step.observation += self.reminder()
        self.rewards.append(step.reward)
        step.info.setdefault("turn", self.turn - 1)
        return step

    def _start(self) -> str:
        raise NotImplementedError

    def _coerce(self, message: str) -> Action | None:
        """The move an untagged message plainly means in this gym, or None (default)."""
        return None

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
