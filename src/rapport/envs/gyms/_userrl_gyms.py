"""UserRL's published tasks played under UserRL's rules, with the ``user`` model playing
the user (`load_userrl` reads the tasks; the prompts are ours).

A move is read as UserRL's environments read the string they are stepped with (``moves:
userrl``, the default): the message must start with its tag (``[action]``, ``[search]``,
``[answer]``, ``[finish]``, lower case; FunctionGym and IntentionGym strip the message
first, the others do not), and what follows is the move's text. ``moves: lenient`` (the
``small`` preset) reads it with `rapport.agents.parse_action` (any case, labels, synonyms)
and notes repeated moves and the turns left in the replies.
An episode's score is UserRL's: the sum of its turn rewards (``trajectory_reward``); its
score in [0, 1] (``gym_score``) is what PRIME's R(tau) reads.

Per gym, what the ``user`` model does and what a turn earns:

- function: no model (f is computed from the task's rule); 1 for the right value at the
  test input (``float()`` of the answer, within 1e-6).
- telepathy: answers every move but ``[answer]`` and ``[finish]`` yes / no / maybe; the
  ``judge`` (else the ``user``) decides every guess; 1 for the right guess.
- turtle: answers yes / no / maybe; the ``judge`` (else the ``user``) grades each of the
  task's criteria 0 / 0.5 / 1; an answer earns its weighted sum's gain over the best, and
  a sum of 1.0 ends the episode (UserRL's evaluation; its environment's default is 0.9).
- intention and persuade: see `rapport.envs.gyms._userrl_talk`.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from rapport.agents import Action
from rapport.llm import GenerateConfig, Message, Model

from ._content import render
from ._core import Gym, Step, normalize
from ._rational import RuleError, evaluate_rule
from ._telepathy import GuessScore
from ._userrl import Task

USER_TOKENS = 300
"""Tokens the user model may write per reply."""

MoveReading = Literal["userrl", "lenient"]
"""How an agent message is read as a move (see the module's docstring)."""

_TAGS = ("action", "search", "answer", "finish")


def userrl_move(message: str, *, strip: bool) -> Action:
    """A message read as UserRL's environments read the string they are stepped with: the
    move whose tag the message starts with (after stripping it, where ``strip``), its text
    the rest, stripped; ``invalid`` when it starts with none."""
    said = message.strip() if strip else message
    for kind in _TAGS:
        tag = f"[{kind}]"
        if said.startswith(tag):
            return Action(kind=kind, text=said[len(tag) :].strip())  # type: ignore[arg-type]
    return Action(kind="invalid", text=said)


class YesNo(BaseModel):
    """A reply to a yes/no question."""

    reply: Literal["yes", "no", "maybe"]


class Verdict(BaseModel):
    """Whether a guess names what the user picked."""

    correct: bool


class UserRLGym(Gym):
    """A gym that plays one UserRL task (given whole; the seed does not choose it).

    Args:
        task: the task as `load_userrl` reads it.
        moves: ``userrl`` (UserRL's reading, no coaching notes) or ``lenient``.
        **options: `Gym` options.
    """

    strips: ClassVar[bool] = False
    """Whether UserRL's environment strips the message before reading its tag."""

    def __init__(self, task: Task, *, moves: MoveReading = "userrl", **options: Any) -> None:
        super().__init__(**options)
        self.task = task
        self.reading: MoveReading = moves
        self.coaching = moves == "lenient"

    def hidden(self) -> dict[str, Any]:
        return dict(self.task)

    def parse(self, message: str) -> Action:
        """The move as UserRL reads it (``moves: userrl``), else as `Gym.parse` does."""
        if self.reading == "lenient":
            return super().parse(message)
        action = userrl_move(message, strip=self.strips)
        self._pending = action
        return action

    @property
    def trajectory_reward(self) -> float:
        """UserRL's episode score: the sum of the turn rewards, in turn order."""
        return sum(self.rewards)

    async def _ask(self, model: Model, schema: type[BaseModel], messages: list[Message]) -> Any:
        out = await model.generate(
            messages, schema=schema, config=GenerateConfig(max_tokens=USER_TOKENS)
        )
        return out.parsed


class UserRLFunctionGym(UserRLGym):
    """UserRL's FunctionGym: query f with four numbers, fetch the test input with
    ``[search] test``, answer f at it; a right answer scores 1 and ends the episode."""

    name: ClassVar[str] = "function"
    instructions: ClassVar[str] = (
        "You are solving a function discovery puzzle: a hidden function f(a, b, c, d) maps "
        "four numbers to one. `[action] a b c d` tells you f at those four numbers, "
        "`[search] test` gives the test input, and `[answer] <number>` submits f at the "
        "test input. Strategy: probe one variable at a time (e.g. 1 0 0 0) to see what "
        "each contributes, check your rule on a new input, then answer. Goal: the value "
        "of f at the test input."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] 1 2 3 4",
        "search": "[search] test",
        "answer": "[answer] 42",
    }
    talks: ClassVar[bool] = False
    strips: ClassVar[bool] = True

    def _start(self) -> str:
        return "The hidden function is ready. Query it, then answer for the test input."

    def secrets(self) -> list[str]:
        """The rule and the test input (a bare value, like 9, would match most lessons)."""
        return [self.task["rule"], f"f({_inputs(self.task['test_case'])})"]

    def _act(self, text: str) -> Step:
        if not text:
            return Step("Give four numbers after [action].")
        numbers = _numbers(text) if self.reading == "lenient" else _userrl_numbers(text)
        if len(numbers) != 4:
            return Step("Give exactly four numbers, e.g. `[action] 1 2 3 4`.")
        if numbers == self.task["test_case"]:
            return Step("That is the test input: its value is what you have to find.")
        try:
            value = evaluate_rule(self.task["rule"], dict(zip("abcd", numbers, strict=True)))
        except RuleError:
            return Step(f"f is not defined at {_inputs(numbers)}; try other numbers.")
        return Step(f"f({_inputs(numbers)}) = {_number(round(value, 4))}")

    def _search(self, query: str) -> Step:
        if query.strip().lower() != "test":
            return Step("Search takes only `test` (the test input).")
        return Step(f"Test input: {_inputs(self.task['test_case'])}")

    def _answer(self, text: str) -> Step:
        value = self._answered(text)
        if value is None:
            return Step("Answer with one number, e.g. `[answer] 42`.")
        right = abs(value - self.task["expected"]) <= 1e-6
        reply = "Correct!" if right else "That is not f at the test input. Keep trying."
        return self._graded(1.0 if right else 0.0, reply, {"correct": right})

    def _answered(self, text: str) -> float | None:
        """The number an answer gives: UserRL's ``float()`` of the whole text (``-16``,
        ``-1.6e+01``); under ``moves: lenient`` the one number in it."""
        if self.reading == "lenient":
            numbers = _numbers(text)
            return numbers[0] if len(numbers) == 1 else None
        try:
            return float(text) if text else None
        except ValueError:
            return None


class UserRLTelepathyGym(UserRLGym):
    """UserRL's TelepathyGym: the user model answers yes / no / maybe about the entity the
    task names; the ``judge`` (else the ``user``) model decides every ``[answer]``. A right
    guess scores 1 (``guess_score: discounted``: less 0.5 x questions / horizon) and ends
    the episode; a wrong one lets it go on.

    Under ``moves: userrl`` every move but ``[answer]`` and ``[finish]`` (an untagged one
    too) is a question, as in UserRL; under ``lenient`` a guess that names the title is
    right without the judge, and a move other than ``[action]`` is refused."""

    name: ClassVar[str] = "telepathy"
    instructions: ClassVar[str] = (
        "You are playing 20 Questions: the user is thinking of something (a person, a "
        "thing, a place, an event ...). Ask a yes/no question with `[action] <question>`; "
        "the user answers yes, no or maybe. Guess with `[answer] <name>`. Strategy: split "
        "the possibilities in half with each question, from broad categories (person, "
        "place or thing; living or not) down to the one. Goal: name it in as few "
        "questions as you can."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Is it a living thing?",
        "answer": "[answer] Mount Everest",
    }

    def __init__(self, task: Task, *, guess_score: GuessScore = "userrl", **options: Any) -> None:
        super().__init__(task, **options)
        self.guess_score = guess_score

    def _start(self) -> str:
        self.questions = 0
        opening = self.task["opening"] or "I am thinking of something."
        return f"{opening} Ask me yes/no questions, then guess."

    def secrets(self) -> list[str]:
        return [self.task["title"]]

    def _act(self, text: str) -> Step:
        self.questions += 1
        return Step("maybe")  # only the user model knows (see `astep`)

    def _answer(self, text: str) -> Step:
        return self._verdict(bool(self.by_code(text)))

    def _verdict(self, right: bool) -> Step:
        if not right:
            self.questions += 1
            return Step("No, that is not it.", 0.0, False, {"correct": False})
        score = 1.0
        if self.guess_score == "discounted":
            score = max(0.0, 1.0 - 0.5 * self.questions / self.horizon)
        reward = max(0.0, score - self.score)
        self.score = max(self.score, score)
        return Step("Yes, that is it!", reward, True, {"correct": True})

    def by_code(self, guess: str) -> bool | None:
        """A guess code can decide under ``moves: lenient``: right when it names the
        title (whole words), wrong when it is a question that does not; None otherwise
        (the judge decides). Under ``moves: userrl`` always None."""
        if self.reading == "userrl":
            return None
        said, title = f" {normalize(guess)} ", f" {normalize(self.task['title'])} "
        if title in said:
            return True
        return False if guess.rstrip().endswith("?") else None

    def _asks(self, action: Action) -> bool:
        """Whether the user model answers this move as a question."""
        if self.reading == "userrl":
            return action.kind not in {"answer", "finish"}
        return action.kind == "action"

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if model is None or self.done or not (action.kind == "answer" or self._asks(action)):
            return self.step(message)
        if action.kind == "answer":
            decided = self.by_code(action.text)
            if decided is None:
                prompt = render("userrl_telepathy_guess", target=self.task["target"])
                verdict = await self._ask(self.judge or model, Verdict, _chat(prompt, action.text))
                decided = verdict.correct
            return self._finish_step(self._verdict(decided))
        self.questions += 1
        prompt = render("userrl_telepathy_user", target=self.task["target"])
        reply = await self._ask(model, YesNo, _chat(prompt, action.text))
        return self._finish_step(Step(reply.reply, info={"simulated": True}))


class UserRLTurtleGym(UserRLGym):
    """UserRL's TurtleGym: the user model hosts the puzzle (yes / no / maybe); an
    explanation is graded per criterion of the task (0, 0.5 or 1) and scores the sum of
    the criteria's weights times their grades, added in order as UserRL adds them. Each
    explanation earns its gain over the best so far; one that scores 1.0 or more ends the
    episode (UserRL's evaluation sets 1.0)."""

    name: ClassVar[str] = "turtle"
    instructions: ClassVar[str] = (
        "You are playing a lateral thinking puzzle: a strange short story hides what really "
        "happened. Ask a yes/no question with `[action] <question>`; the host answers yes, "
        "no or maybe. Give your explanation of the whole story with `[answer] <story>`. "
        "Strategy: find what is odd in the story, form a guess about it and test it with "
        "pointed yes/no questions, ruling things out until one story is left. Goal: "
        "explain what really happened."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Was anyone else in the room?",
        "answer": "[answer] The man was blind, and when the lights failed he knew that ...",
    }
    solved_at: ClassVar[float] = 1.0

    def _start(self) -> str:
        return f"Puzzle ({self.task['title']}): {self.task['surface']}"

    def _act(self, text: str) -> Step:
        return Step("maybe")  # only the user model knows (see `astep`)

    def _answer(self, text: str) -> Step:
        return self._scored([0.0] * len(self.task["criteria"]))

    def _scored(self, grades: list[float]) -> Step:
        criteria = self.task["criteria"]
        score = 0.0
        for c, g in zip(criteria, grades, strict=True):
            score += c["weight"] * g  # in order, unclipped: UserRL's float sum
        full, part = sum(g == 1.0 for g in grades), sum(g == 0.5 for g in grades)
        reply = f"Of the {len(criteria)} points that count, your story gets {full} right" + (
            f" and {part} in part." if part else "."
        )
        step = self._graded(score, reply, {"grades": grades, "score": score})
        step.reward = min(1.0, step.reward)
        if not step.done:
            step.observation += " Ask more, then explain again."
        return step

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        asks = action.kind not in {"answer", "finish"}
        if self.reading == "lenient":
            asks = action.kind == "action"
        if self.done or model is None or not (action.kind == "answer" or asks):
            return self.step(message)
        task, judge = self.task, self.judge or model
        if action.kind == "answer":
            points = "\n".join(f"{i + 1}. {c['statement']}" for i, c in enumerate(task["criteria"]))
            prompt = render(
                "userrl_turtle_grade",
                surface=task["surface"],
                bottom=task["bottom"],
                points=points,
                story=action.text,
            )
            schema = _grades_schema(len(task["criteria"]))
            grades = await self._ask(judge, schema, [Message(role="user", content=prompt)])
            return self._finish_step(self._scored([_half(g) for g in grades.scores]))
        prompt = render("userrl_turtle_host", surface=task["surface"], bottom=task["bottom"])
        reply = await self._ask(model, YesNo, _chat(prompt, action.text))
        return self._finish_step(Step(reply.reply, info={"simulated": True}))


def _chat(system: str, said: str, history: list[tuple[str, str]] | None = None) -> list[Message]:
    """The user model's conversation: its role, the exchanges so far, the agent's move."""
    messages = [Message(role="system", content=system)]
    for asked, replied in history or []:
        messages += [
            Message(role="user", content=asked),
            Message(role="assistant", content=replied),
        ]
    return [*messages, Message(role="user", content=said)]


@functools.cache
def _grades_schema(n: int) -> type[BaseModel]:
    """A grade in [0, 1] for each of ``n`` criteria, in order (one class per ``n``, so its
    JSON schema is built once)."""
    grade = Annotated[float, Field(ge=0.0, le=1.0)]
    return create_model(
        f"Grades{n}",
        scores=(list[grade], Field(min_length=n, max_length=n)),  # type: ignore[valid-type]
    )


def _half(grade: float) -> float:
    """A grade as UserRL's graders give it: 0, 0.5 or 1."""
    return round(grade * 2) / 2


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_USERRL_NUMBER = re.compile(r"-?\d+\.?\d*")
"""FunctionGym's pattern for the numbers of an ``[action]``."""


def _numbers(text: str) -> list[float]:
    return [float(m) for m in _NUMBER.findall(text)]


def _userrl_numbers(text: str) -> list[float]:
    return [float(m) for m in _USERRL_NUMBER.findall(text) if m]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _inputs(numbers: list[float]) -> str:
    return ", ".join(_number(n) for n in numbers)
