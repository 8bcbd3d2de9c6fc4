"""UserRL's published tasks played under UserRL's scoring rules, with the ``user`` model
playing the user (`load_userrl` reads the tasks; the prompts are ours).

Per gym, what the ``user`` model does and what a turn earns (an episode's score is the sum
of its turn rewards, at most 1):

- function: no model (f is computed from the task's rule); 1 for the right value at the
  test input.
- telepathy: answers yes / no / maybe; the ``judge`` (else the ``user``) decides a guess
  code cannot; 1 for the right guess.
- turtle: answers yes / no / maybe; the ``judge`` (else the ``user``) grades each of the
  task's criteria 0 / 0.5 / 1; an answer earns its weighted grade's gain over the best.
- intention: answers and says which hidden details a question asked about; 1.0 / 0.7 / 0.4
  by the most important, less 0.2 per further detail, over the most the task allows.
- persuade: replies and states a stance on a 7-point scale; the levels moved toward
  disagreement / 6.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from rapport.llm import GenerateConfig, Message, Model

from ._content import render
from ._core import AnswerRule, Gym, Step, normalize
from ._rational import RuleError, evaluate_rule
from ._telepathy import GuessScore
from ._userrl import Task

USER_TOKENS = 300
"""Tokens the user model may write per reply."""


class YesNo(BaseModel):
    """A reply to a yes/no question."""

    reply: Literal["yes", "no", "maybe"]


class Verdict(BaseModel):
    """Whether a guess names what the user picked."""

    correct: bool


class IntentionReply(BaseModel):
    """The user's answer, and which hidden details (by number) the question asked about."""

    reply: str = Field(max_length=600)
    covered: list[int] = Field(default_factory=list, max_length=10)


STANCES = (
    "strongly agree",
    "agree",
    "partly agree",
    "neutral",
    "partly disagree",
    "disagree",
    "strongly disagree",
)


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


class UserRLGym(Gym):
    """A gym that plays one UserRL task (given whole; the seed does not choose it)."""

    def __init__(self, task: Task, **options: Any) -> None:
        super().__init__(**options)
        self.task = task

    def hidden(self) -> dict[str, Any]:
        return dict(self.task)

    async def _ask(self, model: Model, schema: type[BaseModel], messages: list[Message]) -> Any:
        out = await model.generate(
            messages, schema=schema, config=GenerateConfig(max_tokens=USER_TOKENS)
        )
        return out.parsed


class UserRLFunctionGym(UserRLGym):
    """UserRL's FunctionGym: query f with four integers, fetch the test input with
    ``[search] test``, answer f at it; a right answer scores 1 and ends the episode."""

    name: ClassVar[str] = "function"
    instructions: ClassVar[str] = (
        "A hidden function f(a, b, c, d) combines four numbers with +, -, *, / and powers. "
        "Query it with `[action] a b c d` (four integers) to see its value. Get the test "
        "input with `[search] test`, then give f at the test input with `[answer] <number>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] 1 2 3 4",
        "search": "[search] test",
        "answer": "[answer] 42",
    }
    talks: ClassVar[bool] = False

    def _start(self) -> str:
        return "The hidden function is ready. Query it, then answer for the test input."

    def secrets(self) -> list[str]:
        """The rule and the test input (a bare value, like 9, would match most lessons)."""
        return [self.task["rule"], f"f({_inputs(self.task['test_case'])})"]

    def _act(self, text: str) -> Step:
        numbers = _numbers(text)
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
        numbers = _numbers(text)
        if len(numbers) != 1:
            return Step("Answer with one number, e.g. `[answer] 42`.")
        right = abs(numbers[0] - self.task["expected"]) <= 1e-6
        reply = "Correct!" if right else "That is not f at the test input. Keep trying."
        return self._graded(1.0 if right else 0.0, reply, {"correct": right})


class UserRLTelepathyGym(UserRLGym):
    """UserRL's TelepathyGym: the user model answers yes / no / maybe about the entity the
    task names; a guess is right when it names the entity's title (by code), wrong when it
    is a question that does not, and else as the ``judge`` (else the ``user``) model says.
    A right guess scores 1 (``guess_score: discounted``: less 0.5 x questions / horizon); a
    wrong one lets the episode go on."""

    name: ClassVar[str] = "telepathy"
    instructions: ClassVar[str] = (
        "The user is thinking of something (a person, a thing, a place, an event ...). Ask "
        "yes/no questions with `[action] <question>`; the user answers yes, no or maybe. "
        "Guess with `[answer] <name>`."
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
        self.score = score
        return Step("Yes, that is it!", score, True, {"correct": True})

    def by_code(self, guess: str) -> bool | None:
        """A guess code can decide: right when it names the title (whole words), wrong
        when it is a question that does not; None otherwise (the judge decides)."""
        said, title = f" {normalize(guess)} ", f" {normalize(self.task['title'])} "
        if title in said:
            return True
        return False if guess.rstrip().endswith("?") else None

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if model is None or self.done or action.kind not in {"action", "answer"}:
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
    explanation is graded per criterion of the task (0, 0.5 or 1, weighted by the task).
    Each explanation earns its gain over the best so far; one graded 0.9 or more ends the
    episode (UserRL's default bar)."""

    name: ClassVar[str] = "turtle"
    instructions: ClassVar[str] = (
        "Solve a lateral-thinking puzzle. Ask yes/no questions with `[action] <question>`; "
        "the host answers yes, no or maybe. Give your full explanation of what really "
        "happened with `[answer] <story>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Was anyone else in the room?",
        "answer": "[answer] The man was blind, and when the lights failed he knew that ...",
    }
    solved_at: ClassVar[float] = 0.9

    def _start(self) -> str:
        return f"Puzzle ({self.task['title']}): {self.task['surface']}"

    def _act(self, text: str) -> Step:
        return Step("maybe")  # only the user model knows (see `astep`)

    def _answer(self, text: str) -> Step:
        return self._scored([0.0] * len(self.task["criteria"]))

    def _scored(self, grades: list[float]) -> Step:
        criteria = self.task["criteria"]
        score = min(1.0, sum(c["weight"] * g for c, g in zip(criteria, grades, strict=True)))
        full, part = sum(g == 1.0 for g in grades), sum(g == 0.5 for g in grades)
        reply = f"Of the {len(criteria)} points that count, your story gets {full} right" + (
            f" and {part} in part." if part else "."
        )
        step = self._graded(score, reply, {"grades": grades})
        if not step.done:
            step.observation += " Ask more, then explain again."
        return step

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        judge = self.judge or model
        if self.done or model is None or action.kind not in {"action", "answer"}:
            return self.step(message)
        task = self.task
        if action.kind == "answer" and judge is not None:
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


IMPORTANCE_REWARD = {3: 1.0, 2: 0.7, 1: 0.4}
"""UserRL's IntentionGym: a question's reward by the most important detail it uncovers."""
MULTI_DETAIL_PENALTY = 0.2
"""UserRL's IntentionGym: less this per further detail one question uncovers."""


class UserRLIntentionGym(UserRLGym):
    """UserRL's IntentionGym: a vague request with hidden details; the user model answers
    each question and says which details it asked about. The episode ends when every detail
    is out (or at ``[finish]``)."""

    name: ClassVar[str] = "intention"
    instructions: ClassVar[str] = (
        "The user's request is vague. Ask one clarifying question per turn with "
        "`[action] <question>` to learn the details they left out; ask about one detail at "
        "a time. Send `[finish]` when you know what they need."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Which city are you flying from?",
        "finish": "[finish]",
    }
    final_move: ClassVar[str] = "finish"

    def _start(self) -> str:
        self.open = list(range(len(self.task["details"])))
        self.history: list[tuple[str, str]] = []
        self.most = sum(IMPORTANCE_REWARD.get(d["importance"], 0.4) for d in self.task["details"])
        return f"({self.task['category']}) {self.task['task']}"

    def _act(self, text: str) -> Step:
        return Step("I am not sure what you mean.")  # only the user model knows

    def uncovered(self, numbers: list[int]) -> Step | None:
        """The reward for the open details (by their number in the prompt, from 1) a
        question asked about; None when it asked about none."""
        picked = sorted({self.open[n - 1] for n in numbers if 1 <= n <= len(self.open)})
        if not picked:
            return None
        details = self.task["details"]
        best = max(IMPORTANCE_REWARD.get(details[i]["importance"], 0.4) for i in picked)
        raw = max(0.0, best - MULTI_DETAIL_PENALTY * (len(picked) - 1))
        self.open = [i for i in self.open if i not in picked]
        reward = raw / self.most if self.most else 0.0
        self.score = min(1.0, self.score + reward)
        return Step("", reward, not self.open, {"uncovered": picked})

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if self.done or model is None or action.kind != "action":
            return self.step(message)
        details = self.task["details"]
        listed = "\n".join(
            f"{n}. {details[i]['description']}"
            + (f" (options: {', '.join(details[i]['options'])})" if details[i]["options"] else "")
            for n, i in enumerate(self.open, start=1)
        )
        prompt = render(
            "userrl_intention_user",
            task=self.task["task"],
            details=listed or "(none left)",
        )
        reply = await self._ask(model, IntentionReply, _chat(prompt, action.text, self.history))
        self.history.append((action.text, reply.reply))
        step = self.uncovered(reply.covered) or Step("")
        step.observation = reply.reply or "..."
        return self._finish_step(step)


class UserRLPersuadeGym(UserRLGym):
    """UserRL's PersuadeGym: the user model holds the task's claim (strongly agree) and
    states a stance on a 7-point scale after each argument; an argument earns the levels
    it moved them toward disagreement / 6. Strongly disagree ends the episode."""

    name: ClassVar[str] = "persuade"
    instructions: ClassVar[str] = (
        "The person holds the claim below. Persuade them to reject it: make one argument "
        "per turn with `[action] <argument>` and answer their objections. Send `[finish]` "
        "when done."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] The evidence you cite is ten years old; newer studies show ...",
        "finish": "[finish]",
    }
    final_move: ClassVar[str] = "finish"

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
        """The step for a stance the person states after an argument."""
        new = STANCES.index(stance)
        levels = new - self.stance
        self.stance = new
        reward = min(1.0, levels / 6) if levels > 0 else 0.0
        reward = min(reward, 1.0 - self.score)
        self.score += reward
        return Step("", reward, new == len(STANCES) - 1, {"stance": stance})

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if self.done or model is None or action.kind not in {"action", "answer"}:
            return self.step(message)
        prompt = render(
            "userrl_persuade_user",
            claim=self.task["claim"],
            argument=self.task["argument"],
            stance=STANCES[self.stance],
            stances=", ".join(STANCES),
        )
        reply = await self._ask(model, PersuadeReply, _chat(prompt, action.text, self.history))
        self.history.append((action.text, reply.reply))
        step = self.moved_to(reply.stance)
        step.observation = f"{reply.reply} (I {reply.stance}.)"
        return self._finish_step(step)


USERRL_PLAYERS: dict[str, type[UserRLGym]] = {
    "function": UserRLFunctionGym,
    "telepathy": UserRLTelepathyGym,
    "turtle": UserRLTurtleGym,
    "intention": UserRLIntentionGym,
    "persuade": UserRLPersuadeGym,
}
"""The gyms that play UserRL's tasks, by name."""


def make_userrl_gym(
    env: str,
    task: Task,
    *,
    horizon: int,
    split: str,
    answers: AnswerRule = "retry",
    guess_score: GuessScore = "userrl",
) -> UserRLGym:
    """The gym that plays a UserRL task of ``env`` (``answers`` for function and turtle,
    ``guess_score`` for telepathy)."""
    options: dict[str, Any] = {"horizon": horizon, "split": split}
    if env in {"function", "turtle"}:
        options["answers"] = answers
    if env == "telepathy":
        options["guess_score"] = guess_score
    return USERRL_PLAYERS[env](task, **options)


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


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _numbers(text: str) -> list[float]:
    return [float(m) for m in _NUMBER.findall(text)]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _inputs(numbers: list[float]) -> str:
    return ", ".join(_number(n) for n in numbers)
