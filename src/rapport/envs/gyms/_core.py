"""The action interface, step results and the base class every gym shares."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rapport.agents import SINGLE_LINE, Action, parse_action
from rapport.llm import Model

HORIZON = 16
"""Default number of agent turns in an episode."""
EASY_HORIZON = 8
"""Default number of agent turns at ``difficulty="easy"``."""

AnswerRule = Literal["retry", "once"]
"""``retry``: an answer short of solving the episode does not end it, and each answer is
rewarded with its gain over the best answer so far (UserRL's FunctionGym, TelepathyGym and
TurtleGym); ``once``: the first answer ends the episode and is its score."""

_REPEATABLE = SINGLE_LINE | {"answer"}
"""The moves a gym remembers, so that making one again is a repeat (see `_made_key`)."""


def format_rule(moves: tuple[str, ...] | list[str]) -> str:
    """How to write a move, naming only the moves a gym takes (a small model offered a
    ``[search]`` it cannot use will keep trying it)."""
    tags = [f"`[{m}]`" if m == "finish" else f"`[{m}] ...`" for m in moves]
    listed = tags[0] if len(tags) == 1 else ", ".join(tags[:-1]) + " or " + tags[-1]
    return (
        "Reply with exactly one move per message, on a line that starts with its tag in "
        f"square brackets: {listed}. Write nothing after the move."
    )


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
        difficulty: ``normal``, or ``easy`` in the gyms that have easier instances
            (``difficulties``): a smaller space to search and a hint in the opening.
    """

    name: ClassVar[str] = "gym"
    instructions: ClassVar[str] = ""
    examples: ClassVar[dict[str, str]] = {}
    """One concrete example per move the gym takes (move kind -> a full message)."""
    final_move: ClassVar[str] = "answer"
    """The move that closes an episode; the last turns remind the agent of it."""
    talks: ClassVar[bool] = True
    """Whether someone answers questions in words here (false where ``[action]`` is a
    query in a fixed form, or there is no ``[action]``)."""
    difficulties: ClassVar[tuple[str, ...]] = ("normal",)
    """The difficulties the gym draws episodes at."""
    solved_at: ClassVar[float] = 1.0
    """The answer score that ends an episode under the ``retry`` answer rule."""
    coaching: bool = True
    """Whether a reply notes a repeated move and, in the last turns, the turns left (UserRL's
    environments say neither: off where a gym plays its tasks as UserRL does)."""

    def __init__(
        self,
        horizon: int = HORIZON,
        split: str = "train",
        difficulty: str = "normal",
        answers: AnswerRule = "retry",
    ) -> None:
        if difficulty not in self.difficulties:
            raise ValueError(
                f"gym '{self.name}' has no difficulty {difficulty!r} "
                f"(it has: {', '.join(self.difficulties)})"
            )
        self.horizon = horizon
        self.split = split
        self.difficulty = difficulty
        self.answers = answers
        self.turn = 0
        self.done = False
        self.score = 0.0
        self.rewards: list[float] = []
        self.rng = random.Random(0)
        self.judge: Model | None = None
        """A judge model for gyms whose final answer needs one (set by the runner)."""
        self._made: set[tuple[str, str]] = set()
        """The ``[action]``/``[search]``/``[answer]`` moves made this episode (kind, text)."""
        self._pending: Action | None = None
        """The move being stepped (set by `parse`, read once the step is finished)."""

    def reset(self, seed: int) -> str:
        """Start the episode a seed names (same seed, same episode); returns the first message."""
        self.rng = random.Random(f"{self.name}:{self.split}:{seed}")
        self.turn, self.done, self.score, self.rewards = 0, False, 0.0, []
        self._made, self._pending = set(), None
        return self._start()

    def step(self, message: str) -> Step:
        """Apply one agent message (code only: no model)."""
        return self._finish_step(self._dispatch(self.parse(message)))

    def parse(self, message: str) -> Action:
        """`parse_action`, then the gym's own reading of an untagged message (if any), in
        the gym's canonical form (see `_canonical`)."""
        action = parse_action(message)
        if action.kind == "invalid":
            action = self._coerce(message) or action
        action = self._canonical(action)
        self._pending = action
        return action

    def repeats(self, message: str) -> bool:
        """Whether the message's move is an ``[action]``, ``[search]`` or ``[answer]`` already
        made this episode (word for word, case and punctuation aside)."""
        key = _made_key(self.parse(message))
        return key is not None and key in self._made

    def move_text(self, message: str) -> str:
        """The agent's message as this gym read it: just the move it took (``[action] ...``),
        so that the conversation an agent sees next holds one clean move per turn rather than
        the replies and moves a model went on to imagine; an unreadable message as it was."""
        action = self.parse(message)
        if action.kind == "invalid":
            return message
        return f"[{action.kind}]" + (f" {action.text}" if action.text else "")

    async def astep(self, message: str, model: Model | None = None) -> Step:
        """Like `step`, but may ask ``model`` (user simulator / judge) where code cannot decide."""
        return self.step(message)

    @property
    def trajectory_reward(self) -> float:
        """The episode's reported score (final once ``done``): here its score in [0, 1]."""
        return self.score

    @property
    def gym_score(self) -> float:
        """The episode's score in [0, 1] (what PRIME's R(tau) reads; see `GymOutcome`)."""
        return self.score

    @property
    def success(self) -> bool:
        """Whether the episode counts as solved."""
        return self.score >= 0.7

    @property
    def moves(self) -> tuple[str, ...]:
        """The moves this gym takes, in the order its prompt shows them."""
        return tuple(self.examples) or ("action", "search", "answer", "finish")

    def format_rule(self) -> str:
        """How to write a move here (see `format_rule`)."""
        return format_rule(self.moves)

    def prompt(self) -> str:
        """The agent's instructions: the gym's rules, the move format and an example of each."""
        lines = [self.instructions, self.format_rule()]
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

    def _repeat_notice(self) -> str:
        """A note when the move just taken was made before (`_made_key`)."""
        action, self._pending = self._pending, None
        key = _made_key(action) if action else None
        if key is None:
            return ""
        if key in self._made:
            if key[0] == "answer":
                return "\n(You gave this exact answer before; try a different one.)"
            return "\n(You made this exact move before; try something new or give your answer.)"
        self._made.add(key)
        return ""

    def hidden(self) -> dict[str, Any]:
        """The episode's hidden state (for scripted policies, tests and the run log)."""
        return {}

    def secrets(self) -> list[str]:
        """Names that give this episode's answer away (the entity, the gold answer): a
        lesson that names one is of no use in another episode (default: none)."""
        return []

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
            "Unrecognized move. "
            + self.format_rule()
            + (f" For example: `{example}`" if example else "")
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
            notes = self._repeat_notice() + self.reminder()  # the notice records the move
            step.observation += notes if self.coaching else ""
        self.rewards.append(step.reward)
        step.info.setdefault("turn", self.turn - 1)
        return step

    def _start(self) -> str:
        raise NotImplementedError

    def _coerce(self, message: str) -> Action | None:
        """The move an untagged message plainly means in this gym, or None (default)."""
        return None

    def _canonical(self, action: Action) -> Action:
        """The move as the gym will take it, without what it ignores (default: as is), so
        that two messages making the same move are seen as a repeat and the agent's history
        shows what was taken."""
        return action

    def _act(self, text: str) -> Step:
        return self._no_such_move("action")

    def _search(self, query: str) -> Step:
        return self._no_such_move("search")

    def _answer(self, text: str) -> Step:
        return self._no_such_move("answer")

    def _graded(self, score: float, observation: str, info: dict[str, Any]) -> Step:
        """An answer's step under the answer rule (`AnswerRule`): the reward is the answer's
        gain over the best one so far, and the episode's score is the best answer's."""
        gain = max(0.0, score - self.score)
        self.score = max(self.score, score)
        done = self.answers == "once" or score >= self.solved_at
        return Step(observation, gain, done, info)

    def _no_such_move(self, kind: str) -> Step:
        """A move the gym does not take: say so and name the ones it does."""
        return Step(f"There is no [{kind}] move here. " + self.format_rule())

    def _finish(self) -> Step:
        return Step("Episode finished.", done=True)

    def _on_timeout(self) -> None:
        """Called when the horizon cuts the episode off (score what exists)."""


def _made_key(action: Action) -> tuple[str, str] | None:
    """How a made ``[action]``, ``[search]`` or ``[answer]`` is remembered (kind, normalized
    text); None for the other moves, which are never repeats. An answer that did not end
    the episode was wrong, so giving it again is a repeat too (TelepathyGym)."""
    return (action.kind, normalize(action.text)) if action.kind in _REPEATABLE else None


def words(text: str) -> set[str]:
    """Lower-case word set of a text (for keyword matching)."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def normalize(text: str) -> str:
    """Lower-case, strip punctuation and articles: the exact-match form of an answer."""
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return " ".join(t for t in tokens if t not in {"a", "an", "the"})
