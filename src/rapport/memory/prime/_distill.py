"""Distillation: a finished episode -> key turns (credit) -> experiences (memory model)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model
from rapport.log import Provenance, SessionRecord

from ._credit import Credit, key_turns, stage_of, zone_of
from ._experience import Conditions, Experience
from ._prompts import render
from ._situation import compact_situation, move_gist

ZONE_TEXT = {
    "golden": ("it worked", "say what to do"),
    "warning": ("it failed", "say what to avoid and what to do instead"),
    "preference": ("partly worked", "say how the user or environment tends to respond"),
}


@dataclass(frozen=True)
class Exploration:
    """One recorded step of a rollout: state, action, turn reward, observation."""

    turn: int
    state: str
    action: str
    reward: float
    observation: str
    record_turn: int
    """The agent turn's index in the session record (provenance)."""


def explorations(record: SessionRecord) -> list[Exploration]:
    """The rollout's steps, read from the record's turns and reward events (the action is
    the move the environment read, where the event records it, else the agent's message)."""
    turns = {t.index: t for t in record.turns}
    steps = []
    for step, event in enumerate(record.events_of("reward")):
        i = event.turn
        before, after = turns.get(i - 1), turns.get(i + 1)
        steps.append(
            Exploration(
                turn=step,
                state=before.text if before else "",
                action=event.move or turns[i].text,
                reward=event.reward,
                observation=after.text if after else "",
                record_turn=i,
            )
        )
    return steps


class DistilledText(BaseModel):
    """What the memory model writes for one key turn."""

    situation: str = Field(max_length=200)
    action: str = Field(max_length=150)
    outcome: str = Field(max_length=200)
    lesson: str = Field(max_length=200)
    preconditions: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list, max_length=3
    )


class Distillation(BaseModel):
    """The model's experiences for the key turns, in order."""

    experiences: list[DistilledText] = Field(min_length=1, max_length=3)


class Lessons(BaseModel):
    """The model's lessons for the key turns, in order (the log supplies the rest)."""

    lessons: list[Annotated[str, Field(max_length=200)]] = Field(min_length=1, max_length=3)


Fields = Literal["lesson", "all"]
"""What the distiller writes: ``lesson`` (lessons only; situation, action and outcome come
from the log) or ``all`` (every field, in its own words, and preconditions)."""


_NOTE = re.compile(r"\n\([^\n]*\)")
"""A note a gym appends to its reply (turns left, a repeated move)."""


def _flat(text: str, n: int = 300) -> str:
    """One line, clipped."""
    return _clip(" ".join(text.split()), n)


def _clip(text: str, n: int = 300) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def distill_prompt(
    env: str,
    steps: list[Exploration],
    keys: list[int],
    reward: float,
    zone: str,
    hidden: dict[str, Any] | None = None,
    fields: Fields = "all",
) -> list[Message]:
    """The distillation prompt for a trajectory and its key turns.

    ``hidden``: what the environment kept hidden (the rule, the entity, the user's intent),
    shown to the distiller after the episode so that its lessons can say what would have
    found it; None leaves it out. ``fields``: the prompt asking for every field (``all``)
    or for lessons only (``lesson``). Both list what the log shows (`episode_facts`).
    """
    turns = "\n".join(
        f"[turn {steps[k].turn + 1}] state: {_flat(steps[k].state)}\n  action: "
        f"{_flat(steps[k].action)}\n  reward: {steps[k].reward:+.2f}\n  observation: "
        f"{_flat(steps[k].observation)}"
        + "".join(f"\n  note: {note}" for note in turn_notes(steps, k))
        for k in keys
    )
    episode = "\n".join(
        f"{'*' if i in keys else ' '} {s.turn + 1}. {move_gist(s.action)} → "
        f"{_clip(' '.join(s.observation.split()), 90)}"
        for i, s in enumerate(steps)
    )
    meaning, instruction = ZONE_TEXT[zone]
    reveal = (
        f"Revealed after the episode (the agent never saw it): {_reveal(hidden)}\n"
        if hidden
        else ""
    )
    facts = "\n".join(f"- {fact}" for fact in episode_facts(steps, reward))
    text = render(
        "distill" if fields == "all" else "distill_lessons",
        env=env,
        facts=facts or "- nothing unusual",
        reward=f"{reward:.2f}",
        zone=zone,
        zone_meaning=meaning,
        zone_instruction=instruction,
        opening=_clip(steps[0].state) if steps else "",
        reveal=reveal,
        episode=episode,
        turns=turns,
    )
    return [Message(role="user", content=text)]


def move_kind(move: str) -> str:
    """``action``, ``search``, ``answer``, ``finish`` or ``invalid``: what `move_gist` read."""
    gist = move_gist(move)
    if gist == "(no valid move)":
        return "invalid"
    tag = re.match(r"\[(search|answer|finish)\]", gist)
    return tag.group(1) if tag else "action"


def _ran_out(step: Exploration) -> bool:
    """Whether the environment cut the episode off at this step (the horizon was reached)."""
    return "turn limit" in step.observation.lower()


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def turn_notes(steps: list[Exploration], i: int) -> list[str]:
    """What code can tell about one move: an answer before any question, a repeat of an
    earlier move, an unreadable message, a reply of "unsure", the reward it earned, the
    turn limit."""
    kinds = [move_kind(s.action) for s in steps[: i + 1]]
    step, kind, notes = steps[i], kinds[i], []
    if kind == "invalid":
        notes.append("this message was not a valid move, so the turn was lost")
    if kind == "answer":
        asked = sum(k in ("action", "search") for k in kinds[:i])
        if not asked:
            notes.append("you answered before asking or querying anything")
        wrong = kinds[:i].count("answer")
        if wrong:
            notes.append(f"you had already answered {_times(wrong)}")
    if kind in ("action", "search"):
        gist = move_gist(step.action)
        earlier = [s.turn + 1 for s in steps[:i] if move_gist(s.action) == gist]
        if earlier:
            notes.append(f"you had made this exact move at turn {earlier[0]}: nothing new")
        if step.observation.strip().lower().startswith("unsure"):
            notes.append("the reply was unsure: the question could not be answered yes or no")
    if step.reward > 0:
        notes.append(f"this move earned reward {step.reward:.2f}")
    if _ran_out(step):
        notes.append("this was the last turn: the episode ran out of turns")
    return notes


def episode_facts(steps: list[Exploration], reward: float) -> list[str]:
    """What code can tell about how an episode went, for the distiller to build on: an
    answer before any question, repeated and unreadable moves, answers given, rewarded
    turns, running out of turns."""
    kinds = [move_kind(s.action) for s in steps]
    facts = []
    asks = [i for i, kind in enumerate(kinds) if kind in ("action", "search")]
    answers = kinds.count("answer")
    if kinds and kinds[0] == "answer":
        facts.append("Your first move was an answer, given before any question or query.")
    elif not asks:
        facts.append("You never asked or queried anything.")
    seen: dict[str, int] = {}
    for i in asks:
        gist = move_gist(steps[i].action)
        seen[gist] = seen.get(gist, 0) + 1
    repeats = sum(n - 1 for n in seen.values())
    if repeats:
        worst = max(seen, key=lambda g: seen[g])
        most = f"`{worst}` {_times(seen[worst])}"
        facts.append(f"You repeated earlier moves {_times(repeats)} ({most}).")
    invalid = kinds.count("invalid")
    if invalid:
        facts.append(f"{invalid} of your {len(kinds)} messages were not a valid move.")
    if answers > 1:
        facts.append(f"You gave {answers} answers.")
    for s in steps:
        if s.reward > 0:
            facts.append(f"Turn {s.turn + 1} earned reward {s.reward:.2f} ({move_gist(s.action)}).")
    if steps and _ran_out(steps[-1]):
        facts.append(f"The episode ran out of turns after {len(steps)} moves.")
    if reward >= 0.7:
        facts.append(f"The episode succeeded with reward {reward:.2f}.")
    return facts


def _reveal(hidden: dict[str, Any], limit: int = 400) -> str:
    """The hidden state as short ``key: value`` pairs."""
    parts = []
    for key, value in hidden.items():
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        parts.append(f"{key}: {' '.join(shown.split())}")
    return _clip("; ".join(parts), limit)


def _key(text: str) -> str:
    """The form two texts are compared in: lower case, single spaces, no final period."""
    return " ".join(text.lower().split()).rstrip(".")


def names_any(text: str, names: list[str]) -> bool:
    """Whether ``text`` contains one of ``names`` as whole words (case and punctuation aside;
    a plural ``s`` counts)."""
    padded = f" {' '.join(_tokens(text))} "
    for name in names:
        form = " ".join(_tokens(name))
        if form and (f" {form} " in padded or f" {form}s " in padded):
            return True
    return False


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def quotes(text: str, sources: list[str], n: int = 6) -> bool:
    """Whether ``text`` repeats ``n`` or more words in a row from one of ``sources``: a small
    model's "lesson" that parrots the environment's reply (a format error message, a hint)
    instead of saying what to do."""
    own = _tokens(text)
    runs = {tuple(own[i : i + n]) for i in range(len(own) - n + 1)}
    if not runs:
        return False
    for source in sources:
        words = _tokens(source)
        if any(tuple(words[i : i + n]) in runs for i in range(len(words) - n + 1)):
            return True
    return False


def _distinct(items: list[str]) -> list[str]:
    """Non-empty items, first of each (case- and space-insensitive) kept."""
    seen, out = set(), []
    for item in items:
        key = _key(item)
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return out


def grounded(steps: list[Exploration], key: int, reward: float) -> tuple[str, str, str]:
    """Situation, action and outcome of a key turn, written from the log.

    The situation reads after "When" (``you have made 2 moves; the last, ..., got: ...``);
    the action is the move the environment read; the outcome its reply and the episode's
    reward.
    """
    before, step = steps[:key], steps[key]
    if before:
        last = before[-1]
        reply = _flat(_NOTE.sub("", last.observation), 80)
        plural = "s" if len(before) > 1 else ""
        situation = (
            f"you have made {len(before)} move{plural}; "
            f"the last, {move_gist(last.action)}, got: {reply}"
        )
    else:
        situation = "you have made no move yet"
    outcome = f"{_flat(step.observation, 150)} (episode reward {reward:.2f})"
    return situation, _flat(step.action, 150), outcome


async def distill(
    model: Model,
    record: SessionRecord,
    *,
    library_ids: list[str],
    iteration: int,
    credit: Credit = "reward_to_go",
    k: int = 3,
    reveal_hidden: bool = True,
    known: set[str] | None = None,
    fields: Fields = "lesson",
) -> list[Experience]:
    """Experiences from one episode (one memory-model call; stage/zone/conditions by code).

    ``reveal_hidden``: show the distiller what the episode kept hidden (``outcome["hidden"]``).
    ``known``: lessons already in the library for this environment; an experience whose
    lesson is empty, one of those, a repeat of an earlier one in this batch, one that
    names the episode's answer (``outcome["secrets"]``: the entity, the gold answer) or one
    that copies a run of words from the environment's replies (`quotes`) is dropped.
    Repeated preconditions are merged. ``fields``: ``lesson`` has the model write only the
    lessons while situation, action and outcome come from the log (`grounded`): what a
    small model writes for those is often wrong; ``all`` has it write every field and the
    preconditions.
    """
    steps = explorations(record)
    if not steps:
        return []
    known = {_key(lesson) for lesson in known or set()}
    env = str(record.outcome.get("env", "?"))
    horizon = int(record.outcome.get("horizon", 16))
    reward = float(record.outcome.get("trajectory_reward", 0.0))
    keys = key_turns([s.reward for s in steps], trajectory_reward=reward, method=credit, k=k)
    zone = zone_of(reward)
    hidden = record.outcome.get("hidden") if reveal_hidden else None
    prompt = distill_prompt(
        env, steps, keys, reward, zone, hidden if isinstance(hidden, dict) else None, fields
    )
    config = GenerateConfig(max_tokens=700)
    written: list[tuple[str, str, str, str, list[str]]] = []
    if fields == "all":
        out = await model.generate(prompt, schema=Distillation, config=config)
        written = [
            (t.situation, t.action, t.outcome, t.lesson, t.preconditions)
            for t in out.parsed.experiences
        ]
    else:
        out = await model.generate(prompt, schema=Lessons, config=config)
        written = [
            (*grounded(steps, key, reward), lesson, [])
            for key, lesson in zip(keys, out.parsed.lessons, strict=False)
        ]
    secrets = [str(x) for x in record.outcome.get("secrets") or []]
    replies = [s.observation for s in steps]
    made: list[Experience] = []
    for key, text, exp_id in zip(keys, written, library_ids, strict=False):
        situation, action, outcome, lesson_text, preconditions = text
        lesson = _key(lesson_text)
        if (
            not lesson
            or lesson in known
            or any(_key(e.lesson) == lesson for e in made)
            or names_any(lesson_text, secrets)
            or quotes(lesson_text, replies)
        ):
            continue
        step = steps[key]
        stage = stage_of(step.turn, horizon)
        before = [(x.action, x.observation) for x in steps[:key]]
        made.append(
            Experience(
                id=exp_id,
                situation=situation,
                action=action,
                outcome=outcome,
                lesson=lesson_text.strip(),
                stage=stage,
                zone=zone,
                state=compact_situation(env, stage, before),
                conditions=Conditions(
                    envs=[env],
                    turn_range=(step.turn, step.turn),
                    preconditions=_distinct(preconditions),
                ),
                created_iteration=iteration,
                provenance=[
                    Provenance(
                        session=record.index,
                        turn=step.record_turn,
                        source=f"{record.condition}/{record.user_id}/{record.spec_id}",
                    )
                ],
            )
        )
    return made
