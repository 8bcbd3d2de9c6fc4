"""Distillation: a finished episode -> key turns (credit) -> experiences (memory model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

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


def _clip(text: str, n: int = 300) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def distill_prompt(
    env: str,
    steps: list[Exploration],
    keys: list[int],
    reward: float,
    zone: str,
    hidden: dict[str, Any] | None = None,
) -> list[Message]:
    """The distillation prompt for a trajectory and its key turns.

    ``hidden``: what the environment kept hidden (the rule, the entity, the user's intent),
    shown to the distiller after the episode so that its lessons can say what would have
    found it; None leaves it out.
    """
    turns = "\n".join(
        f"[turn {steps[k].turn + 1}] state: {_clip(steps[k].state)}\n  action: "
        f"{_clip(steps[k].action)}\n  reward: {steps[k].reward:+.2f}\n  observation: "
        f"{_clip(steps[k].observation)}"
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
    text = render(
        "distill",
        env=env,
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


def _distinct(items: list[str]) -> list[str]:
    """Non-empty items, first of each (case- and space-insensitive) kept."""
    seen, out = set(), []
    for item in items:
        key = _key(item)
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return out


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
) -> list[Experience]:
    """Experiences from one episode (one memory-model call; stage/zone/conditions by code).

    ``reveal_hidden``: show the distiller what the episode kept hidden (``outcome["hidden"]``).
    ``known``: lessons already in the library for this environment; an experience whose
    lesson is empty, one of those, or a repeat of an earlier one in this batch is dropped.
    Repeated preconditions are merged.
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
    out = await model.generate(
        distill_prompt(
            env, steps, keys, reward, zone, hidden if isinstance(hidden, dict) else None
        ),
        schema=Distillation,
        config=GenerateConfig(max_tokens=700),
    )
    made: list[Experience] = []
    for key, text, exp_id in zip(keys, out.parsed.experiences, library_ids, strict=False):
        lesson = _key(text.lesson)
        if not lesson or lesson in known or any(_key(e.lesson) == lesson for e in made):
            continue
        step = steps[key]
        stage = stage_of(step.turn, horizon)
        before = [(x.action, x.observation) for x in steps[:key]]
        made.append(
            Experience(
                id=exp_id,
                situation=text.situation,
                action=text.action,
                outcome=text.outcome,
                lesson=text.lesson,
                stage=stage,
                zone=zone,
                state=compact_situation(env, stage, before),
                conditions=Conditions(
                    envs=[env],
                    turn_range=(step.turn, step.turn),
                    preconditions=_distinct(text.preconditions),
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
