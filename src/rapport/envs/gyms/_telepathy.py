"""TelepathyGym: twenty questions over a written entity catalogue."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rapport.llm import GenerateConfig, Message, Model

from ._content import load_data, render, split_pool
from ._core import Action, Gym, Step, normalize, words

GuessScore = Literal["userrl", "discounted"]
"""What a right guess scores: ``userrl`` 1.0 (UserRL's TelepathyGym); ``discounted``
``1 - 0.5 * questions / horizon`` (fewer questions score higher)."""

EASY_CHOICES = 4
"""How many names an easy episode lists (the target among them)."""


@dataclass(frozen=True)
class Entity:
    """One thing the user may be thinking of, with its true attributes (closed world)."""

    name: str
    attributes: frozenset[str]


@functools.cache
def catalogue() -> tuple[list[Entity], dict[str, set[str]]]:
    """The entities and the attribute -> question keywords map."""
    data = load_data("entities.yaml")
    entities = [
        Entity(name, frozenset(group["defaults"]) | frozenset((extra or "").split()))
        for group in data["groups"]
        for name, extra in group["entities"].items()
    ]
    return entities, {a: set(kw) for a, kw in data["attributes"].items()}


@functools.cache
def _name_forms() -> tuple[tuple[str, str, str], ...]:
    """Each entity name with its padded normalized form and plural, computed once."""
    return tuple(
        (e.name, f" {normalize(e.name)} ", f" {normalize(e.name)}s ") for e in catalogue()[0]
    )


class TelepathyGym(Gym):
    """The user thinks of an entity; the agent asks yes/no questions, then guesses.

    Questions that mention catalogue attributes are answered by code (all mentioned
    attributes must hold for "yes"); others go to the ``user`` model when one is given,
    else "unsure". A right guess scores 1.0, as in UserRL's TelepathyGym (``guess_score:
    userrl``); ``guess_score: discounted`` scores it ``1 - 0.5 * questions / horizon``.
    """

    name: ClassVar[str] = "telepathy"
    instructions: ClassVar[str] = (
        "The user is thinking of a thing (an animal, food, object, vehicle, place, plant ...). "
        "Ask yes/no questions with `[action] <question>`; the user answers yes, no or unsure. "
        "Guess with `[answer] <name>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Is it an animal?",
        "answer": "[answer] penguin",
    }

    difficulties: ClassVar[tuple[str, ...]] = ("normal", "easy")

    def __init__(self, *args: Any, guess_score: GuessScore = "userrl", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guess_score = guess_score

    def prompt(self) -> str:
        """The gym's prompt; under ``guess_score: discounted`` it says that fewer questions
        score higher."""
        extra = "\nFewer questions score higher." if self.guess_score == "discounted" else ""
        return super().prompt() + extra

    def _start(self) -> str:
        entities, self.keywords = catalogue()
        pool = split_pool(entities, self.split)
        self.target = self.rng.choice(pool)
        self.questions = 0
        self.choices: list[str] = []
        if self.difficulty == "easy":
            return self._start_easy(pool)
        return "I am thinking of something. Ask me yes/no questions, then guess."

    def _start_easy(self, pool: list[Entity]) -> str:
        """The target among ``EASY_CHOICES`` names from the same pool, listed in the opening
        (each differs from the target in an attribute, so one question can tell them apart)."""
        others = [
            e for e in pool if e.name != self.target.name and e.attributes != self.target.attributes
        ]
        picked = [self.target, *self.rng.sample(others, EASY_CHOICES - 1)]
        self.rng.shuffle(picked)
        self.choices = [e.name for e in picked]
        return (
            "I am thinking of one of these: "
            + ", ".join(self.choices)
            + ". Ask me yes/no questions, then guess."
        )

    def hidden(self) -> dict[str, Any]:
        return {"entity": self.target.name, "attributes": sorted(self.target.attributes)}

    def secrets(self) -> list[str]:
        return [self.target.name]

    def mentioned(self, question: str) -> list[str]:
        """The catalogue attributes a question mentions."""
        tokens = words(question)
        return [a for a, kws in self.keywords.items() if tokens & kws]

    def named(self, text: str) -> list[str]:
        """The catalogue entities a text names (whole words, a plural ``s`` allowed; a name
        inside a longer named one, like bear in polar bear, does not count)."""
        padded = f" {normalize(text)} "
        found = [name for name, one, many in _name_forms() if one in padded or many in padded]
        return [n for n in found if not any(n != m and f" {n} " in f" {m} " for m in found)]

    def answer_by_code(self, question: str) -> str | None:
        """yes / no from the entities a question names or else the attributes it mentions;
        None when it mentions neither."""
        names = self.named(question)
        if self.target.name in names:
            return "yes"
        if names and not any(f" {n} " in f" {self.target.name} " for n in names):
            return "no"
        attrs = self.mentioned(question)
        if not attrs:
            return None
        return "yes" if all(a in self.target.attributes for a in attrs) else "no"

    def _coerce(self, message: str) -> Action | None:
        """An untagged message that is a single question is an ``[action]``."""
        lines = [line for line in message.strip().splitlines() if line.strip()]
        if len(lines) == 1 and lines[0].rstrip().endswith("?"):
            return Action("action", lines[0].strip())
        return None

    def _act(self, text: str) -> Step:
        self.questions += 1
        return Step(self.answer_by_code(text) or "unsure")

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if (
            model is None
            or self.done
            or action.kind != "action"
            or self.answer_by_code(action.text)
        ):
            return self.step(message)
        self.questions += 1
        reply = await _ask_user(model, self.target.name, action.text)
        return self._finish_step(Step(reply, info={"simulated": True}))

    def _answer(self, text: str) -> Step:
        """Right when the guess is the name, or names the target and no other entity."""
        if normalize(text) == normalize(self.target.name) or self.named(text) == [self.target.name]:
            self.score = 1.0
            if self.guess_score == "discounted":
                self.score = max(0.0, 1.0 - 0.5 * self.questions / self.horizon)
            return Step("Yes, that is it!", self.score, True, {"correct": True})
        self.questions += 1
        return Step("No, that is not it.", 0.0, False, {"correct": False})


async def _ask_user(model: Model, entity: str, question: str) -> str:
    prompt = [
        Message(
            role="system",
            content=render("telepathy_user", entity=entity),
        ),
        Message(role="user", content=question),
    ]
    out = await model.generate(prompt, config=GenerateConfig(max_tokens=4))
    first = (out.text.strip().split() or ["unsure"])[0].lower().strip(".,!")
    return first if first in {"yes", "no"} else "unsure"
