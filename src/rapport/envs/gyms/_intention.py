"""IntentionGym: a vague request; hidden details come out only when asked about."""

from __future__ import annotations

from typing import Any, ClassVar

from ._content import load_data, split_pool
from ._core import Gym, Step, words

WEIGHTS = {"high": 3.0, "medium": 2.0, "low": 1.0}
REDUNDANT_PENALTY = 0.05


class IntentionGym(Gym):
    """Score = importance-weighted share of details uncovered, less 0.05 per redundant question.

    A question reveals the unrevealed detail whose question words it shares most; a question
    that reveals nothing new (repeated or off the point) is redundant.
    """

    name: ClassVar[str] = "intention"
    instructions: ClassVar[str] = (
        "The user's request is vague. Ask one clarifying question per turn with "
        "`[action] <question>` to learn what they really need; important details matter most "
        "and redundant questions cost points. When you know enough, send `[finish]` (or "
        "`[answer] <summary of the need>`)."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Which city are you flying from?",
        "finish": "[finish]",
    }
    final_move: ClassVar[str] = "finish"
    difficulties: ClassVar[tuple[str, ...]] = ("normal", "easy")

    def _start(self) -> str:
        task: dict[str, Any] = self.rng.choice(split_pool(load_data("intentions.yaml"), self.split))
        if self.difficulty == "easy":
            # the low-importance details are left out, and the opening names a topic per detail
            kept = [d for d in task["details"] if d["importance"] != "low"]
            task = {**task, "details": kept}
        self.task = task
        self.revealed: set[int] = set()
        self.redundant = 0
        self.total = sum(WEIGHTS[d["importance"]] for d in self.task["details"])
        opening = "User: " + self.task["request"]
        if self.difficulty == "easy":
            topics = ", ".join(str(d["keys"][0]) for d in self.task["details"])
            opening += f"\n(Hint: ask one question about each of: {topics}.)"
        return opening

    def hidden(self) -> dict[str, Any]:
        return dict(self.task)

    def match(self, question: str) -> int | None:
        """The unrevealed detail a question asks about (most shared question words), if any."""
        tokens = words(question)
        best, best_overlap = None, 0
        for i, detail in enumerate(self.task["details"]):
            overlap = len(tokens & set(map(str, detail["keys"])))
            if i not in self.revealed and overlap > best_overlap:
                best, best_overlap = i, overlap
        return best

    def _act(self, text: str) -> Step:
        index = self.match(text)
        if index is None:
            self.redundant += 1
            self._rescore()
            return Step("I don't have anything more to add on that.", -REDUNDANT_PENALTY)
        self.revealed.add(index)
        self._rescore()
        detail = self.task["details"][index]
        return Step(
            detail["value"], WEIGHTS[detail["importance"]] / self.total, info={"detail": index}
        )

    def _rescore(self) -> None:
        got = sum(WEIGHTS[self.task["details"][i]["importance"]] for i in self.revealed)
        self.score = min(1.0, max(0.0, got / self.total - REDUNDANT_PENALTY * self.redundant))

    def _answer(self, text: str) -> Step:
        return self._finish()

    def _finish(self) -> Step:
        return Step(
            f"Thanks. You uncovered {len(self.revealed)} of {len(self.task['details'])} details.",
            0.0,
            True,
        )
