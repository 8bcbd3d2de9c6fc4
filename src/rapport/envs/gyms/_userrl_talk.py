"""UserRL's IntentionGym and PersuadeGym: the user model answers every move but
``[finish]`` (a question without a tag, or a ``[search]``, can earn reward, as in UserRL).

- intention: the user answers and says which hidden details the move asked about; a move
  earns 1.0 / 0.7 / 0.4 by the most important of them, less 0.2 per further one (UserRL's
  floats, clipped to [0, 1]); the episode's score is the sum, uncapped (Table 1 of the
  PRIME paper reports ~1.6-1.9); its score in [0, 1] is the share of details uncovered.
- persuade: the user replies and states a stance on a 7-point scale; a move earns the
  levels it moved them toward disagreement / 6, rounded to 6 places as UserRL rounds; the
  episode's score is the sum, uncapped; its score in [0, 1] is the best stance's (0 for
  strongly agree ... 1 for strongly disagree).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from rapport.agents import Action
from rapport.llm import Model

from ._content import render
from ._core import Step
from ._userrl_gyms import UserRLGym, _chat

IMPORTANCE_REWARD = {3: 1.0, 2: 0.7, 1: 0.4}
"""UserRL's IntentionGym: a move's reward by the most important detail it uncovers."""
MULTI_DETAIL_PENALTY = 0.2
"""UserRL's IntentionGym: less this per further detail one move uncovers."""

STANCES = (
    "strongly agree",
    "agree",
    "partly agree",
    "neutral",
    "partly disagree",
    "disagree",
    "strongly disagree",
)


class IntentionReply(BaseModel):
    """The user's answer, and which hidden details (by number) the question asked about."""

    reply: str = Field(max_length=600)
    covered: list[int] = Field(default_factory=list, max_length=10)


class PersuadeReply(BaseModel):
    """The user's reply to an argument and their stance after it."""

    reply: str = Field(max_length=800)
    stance: Literal[
        "strongly agree",
        "agree",
        "partly agree",
        "neutral",
        "partly disagree",
        "disagree",
        "strongly disagree",
    ]


class _TalkGym(UserRLGym):
    """A gym whose user answers every move but ``[finish]``."""

    final_move: ClassVar[str] = "finish"

    def _talks_to(self, action: Action) -> bool:
        """Whether the user model answers this move."""
        if self.reading == "userrl":
            return action.kind != "finish"
        return action.kind in {"action", "answer"}

    def _said(self, message: str, action: Action) -> str:
        """What the user model is shown of the move: under ``moves: userrl`` the message
        as UserRL passes it on, else the move's text."""
        return message.strip() if self.reading == "userrl" else action.text


class UserRLIntentionGym(_TalkGym):
    """UserRL's IntentionGym: a vague request with hidden details. The episode ends when
    every detail is out, at ``[finish]`` or at the horizon."""

    name: ClassVar[str] = "intention"
    instructions: ClassVar[str] = (
        "You are helping a user whose request is vague or leaves things out. Ask a "
        "clarifying question with `[action] <question>` to learn what they left out; send "
        "`[finish]` once you understand what they need. Strategy: start with open "
        "questions to see what matters, then narrow down; ask about related aspects "
        "together in one question. Goal: uncover every detail the request is missing."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Which city are you flying from, and on which dates?",
        "finish": "[finish]",
    }
    strips: ClassVar[bool] = True

    def parse(self, message: str) -> Action:
        """As UserRL's IntentionGym reads it: ``[finish]`` in any case ends it."""
        if self.reading == "userrl" and message.strip().lower().startswith("[finish]"):
            action = Action(kind="finish")
            self._pending = action
            return action
        return super().parse(message)

    def _start(self) -> str:
        self.open = list(range(len(self.task["details"])))
        self.history: list[tuple[str, str]] = []
        return f"({self.task['category']}) {self.task['task']}"

    @property
    def gym_score(self) -> float:
        """The share of the hidden details uncovered."""
        total = len(self.task["details"])
        return (total - len(self.open)) / total if total else 0.0

    @property
    def success(self) -> bool:
        return self.gym_score >= 0.7

    def _act(self, text: str) -> Step:
        return Step("I am not sure what you mean.")  # only the user model knows

    def uncovered(self, numbers: list[int]) -> Step:
        """The step for the open details (by their number in the prompt, from 1) a move
        asked about, as UserRL rewards them: each listed number counts, a repeated one
        twice (as UserRL counts a repeated index)."""
        picked = [self.open[n - 1] for n in numbers if 1 <= n <= len(self.open)]
        reward = 0.0
        if picked:
            details = self.task["details"]
            most = max(int(details[i]["importance"]) for i in picked)
            reward = IMPORTANCE_REWARD.get(most, 0.4)
            if len(picked) > 1:
                reward = max(0.0, reward - MULTI_DETAIL_PENALTY * (len(picked) - 1))
            reward = max(0.0, min(1.0, reward))
        self.open = [i for i in self.open if i not in picked]
        self.score = self.gym_score
        return Step("", reward, not self.open, {"uncovered": sorted(set(picked))})

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if self.done or model is None or not self._talks_to(action):
            return self.step(message)
        details = self.task["details"]
        listed = "\n".join(
            f"{n}. {details[i]['description']}"
            + (f" (options: {', '.join(details[i]['options'])})" if details[i]["options"] else "")
            for n, i in enumerate(self.open, start=1)
        )
        prompt = render(
            "userrl_intention_user", task=self.task["task"], details=listed or "(none left)"
        )
        said = self._said(message, action)
        reply = await self._ask(model, IntentionReply, _chat(prompt, said, self.history))
        self.history.append((said, reply.reply))
        step = self.uncovered(reply.covered)
        step.observation = reply.reply or "..."
        return self._finish_step(step)


class UserRLPersuadeGym(_TalkGym):
    """UserRL's PersuadeGym: the user model holds the task's claim (strongly agree) and
    states a stance after each move; strongly disagree ends the episode."""

    name: ClassVar[str] = "persuade"
    instructions: ClassVar[str] = (
        "You are arguing with a person to change their mind about the claim below. Make "
        "one argument per turn with `[action] <argument>`; send `[finish]` when you are "
        "done. Strategy: lead with your strongest point, answer their objections before "
        "they raise them, and back each point with concrete examples and sources they can "
        "trust. Goal: move them away from the claim."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] The evidence you cite is ten years old; newer studies show ...",
        "finish": "[finish]",
    }

    def __init__(self, task: dict[str, Any], **options: Any) -> None:
        super().__init__(task, **options)
        self.stance = 0

    def _start(self) -> str:
        self.stance = 0
        self.history: list[tuple[str, str]] = []
        return (
            f"Claim: {self.task['claim']}\nPerson: I strongly agree with this. "
            f"{self.task['argument']}"
        )

    def _act(self, text: str) -> Step:
        return Step(f"I still {STANCES[self.stance]}.")  # only the user model moves

    def moved_to(self, stance: str) -> Step:
        """The step for a stance the person states after a move."""
        new = STANCES.index(stance)
        levels = new - self.stance
        self.stance = new
        reward = 0.0
        if levels >= 6:
            reward = 1.0
        elif levels > 0:
            reward = round(1.0 * levels / 6, 6)
        self.score = max(self.score, stance_score(new))
        return Step("", reward, new == len(STANCES) - 1, {"stance": stance})

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if self.done or model is None or not self._talks_to(action):
            return self.step(message)
        prompt = render(
            "userrl_persuade_user",
            claim=self.task["claim"],
            argument=self.task["argument"],
            stance=STANCES[self.stance],
            stances=", ".join(STANCES),
        )
        said = self._said(message, action)
        reply = await self._ask(model, PersuadeReply, _chat(prompt, said, self.history))
        self.history.append((action.text or said, reply.reply))
        step = self.moved_to(reply.stance)
        step.observation = f"{reply.reply} (I {reply.stance}.)"
        return self._finish_step(step)


def stance_score(level: int) -> float:
    """UserRL's score of a stance (0 strongly agree ... 1 strongly disagree), as it
    tabulates it (to 4 places)."""
    return (0.0, 0.1667, 0.3333, 0.5, 0.6667, 0.8333, 1.0)[level]
