"""TurtleGym: lateral-thinking puzzles; a host who knows the hidden story answers questions."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model, ModelError

from ._content import load_data, render, split_pool
from ._core import Gym, Step, words


class Coverage(BaseModel):
    """The judge's verdict: which key points (by number) the explanation covers."""

    covered: list[int] = Field(default_factory=list, max_length=10)


class TurtleGym(Gym):
    """The agent asks yes/no questions about a puzzle, then explains what really happened.

    An explanation scores the share of key points it covers: by the ``judge``-like model
    given to `astep` when there is one, else by each key point's signal words. Under the
    ``retry`` answer rule an explanation below 0.9 (UserRL's bar) is told how many points it
    covers and the episode goes on; each earns its gain over the best so far.
    Questions that touch a key point's words are answered "yes" by code; others go to
    the model (yes / no / irrelevant) or get "irrelevant" without one.
    """

    name: ClassVar[str] = "turtle"
    instructions: ClassVar[str] = (
        "Solve a lateral-thinking puzzle. Ask yes/no questions with `[action] <question>`; "
        "the host answers yes, no or irrelevant. Give your full explanation with "
        "`[answer] <what really happened>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Did the man know the woman before?",
        "answer": "[answer] The man was a lighthouse keeper and the ship crashed because he "
        "had switched off the light.",
    }

    difficulties: ClassVar[tuple[str, ...]] = ("normal", "easy")
    solved_at: ClassVar[float] = 0.9

    def _start(self) -> str:
        self.puzzle: dict[str, Any] = self.rng.choice(
            split_pool(load_data("turtle.yaml"), self.split)
        )
        opening = "Puzzle: " + self.puzzle["surface"]
        if self.difficulty == "easy":
            return opening + self._hint()
        return opening

    def _hint(self) -> str:
        """Every key point but the last, given away (one is left to find by asking)."""
        points = [kp["point"] for kp in self.puzzle["key_points"][:-1]]
        count = len(self.puzzle["key_points"])
        known = f" What is known: {'; '.join(points)}." if points else ""
        return (
            f"\nHint: a full explanation covers {count} point{'s' if count > 1 else ''}."
            + known
            + " Find the rest by asking."
        )

    def hidden(self) -> dict[str, Any]:
        return dict(self.puzzle)

    def covered_by_code(self, text: str) -> list[bool]:
        """Per key point: does the text contain one of its signal words."""
        tokens = words(text)
        return [bool(tokens & set(map(str, kp["keywords"]))) for kp in self.puzzle["key_points"]]

    def _act(self, text: str) -> Step:
        return Step("yes" if any(self.covered_by_code(text)) else "irrelevant")

    def _answer(self, text: str) -> Step:
        return self._scored(self.covered_by_code(text))

    def _scored(self, covered: list[bool]) -> Step:
        score = sum(covered) / len(covered)
        step = self._graded(score, f"The story: {self.puzzle['hidden']}", {"covered": covered})
        if not step.done:  # the story stays hidden while the episode goes on
            step.observation = (
                f"Your explanation covers {sum(covered)} of the story's {len(covered)} key "
                "points. Ask more, then explain again."
            )
        return step

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        judge = self.judge or model
        if self.done:
            return self.step(message)
        if action.kind == "answer" and judge is not None:
            covered = await self._judge(judge, action.text)
            return self._finish_step(self._scored(covered))
        is_question = action.kind == "action" and not any(self.covered_by_code(action.text))
        if model is not None and is_question:
            return self._finish_step(Step(await self._host(model, action.text)))
        return self.step(message)

    async def _host(self, model: Model, question: str) -> str:
        prompt = [
            Message(
                role="system",
                content=render(
                    "turtle_host", surface=self.puzzle["surface"], hidden=self.puzzle["hidden"]
                ),
            ),
            Message(role="user", content=question),
        ]
        out = await model.generate(prompt, config=GenerateConfig(max_tokens=4))
        first = (out.text.strip().split() or ["irrelevant"])[0].lower().strip(".,!")
        return first if first in {"yes", "no"} else "irrelevant"

    async def _judge(self, model: Model, explanation: str) -> list[bool]:
        points = "\n".join(
            f"{i + 1}. {kp['point']}" for i, kp in enumerate(self.puzzle["key_points"])
        )
        prompt = [
            Message(
                role="user",
                content=render("turtle_judge", points=points, explanation=explanation),
            )
        ]
        by_code = self.covered_by_code(explanation)
        try:
            out = await model.generate(prompt, schema=Coverage)
        except ModelError:  # a failed judge call falls back to the signal words
            return by_code
        picked = {i - 1 for i in out.parsed.covered}
        return [i in picked or hit for i, hit in enumerate(by_code)]
