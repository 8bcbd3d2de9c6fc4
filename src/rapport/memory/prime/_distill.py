"""Distillation: a finished episode -> key turns (credit) -> one experience (memory model)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model, ModelError, retry_messages
from rapport.log import Provenance, RewardEvent, SessionRecord

from ._credit import (
    Credit,
    TrajectoryReward,
    anchor_turn,
    credit_for,
    key_turns,
    stage_of,
    trajectory_reward,
    zone_of,
)
from ._experience import Conditions, Experience, ExperienceEvent
from ._needs import RewardedEpisode
from ._prompts import render
from ._situation import compact_situation, move_gist
from ._verify import LESSON_CHARS, TurnFacts, lesson_problems, whole_sentences

ZONE_TEXT = {
    "golden": ("it worked", "say what to do"),
    "warning": ("it failed", "say what to avoid and what to do instead"),
    "preference": ("partly worked", "say how the user or environment tends to respond"),
}


ASKING_EXAMPLES = (
    '"Ask whether ... first", "Query ... before ...", "Do not answer until ...; instead ..."'
)
QUERY_EXAMPLES = (
    '"Query ... before ...", "Try ... rather than ...", "Do not answer until ...; instead ..."'
)
"""Example lesson openings for the distiller: where nobody answers questions (FunctionGym,
SearchGym) none of them asks one."""


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
    rewarded = [(e, e.turn) for e in record.events_of(RewardEvent) if e.turn is not None]
    for step, (event, i) in enumerate(rewarded):
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
    """What the memory model writes for an episode when it writes every field."""

    situation: str = Field(max_length=200)
    action: str = Field(max_length=150)
    outcome: str = Field(max_length=200)
    lesson: str = Field(max_length=LESSON_CHARS)
    preconditions: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list, max_length=3
    )


class Lesson(BaseModel):
    """What the memory model writes for an episode (the log supplies the rest)."""

    lesson: str = Field(max_length=LESSON_CHARS)


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
    *,
    stage: str = "",
    score: float | None = None,
    rules: str = "",
    talks: bool = True,
) -> list[Message]:
    """The distillation prompt for a trajectory, its key turns and the stage its lesson is for.

    ``hidden``: what the environment kept hidden (the rule, the entity, the user's intent),
    shown to the distiller after the episode so that its lesson can say what would have
    found it; None leaves it out. ``fields``: the prompt asking for every field (``all``)
    or for the lesson only (``lesson``). Both list what the log shows (`episode_facts`).
    ``stage``: the stage of the key turn with the most credit; ``score``: the gym's score
    when it differs from ``reward``. ``rules``: the environment's instructions to the agent
    (the moves it takes); ``talks``: whether someone answers questions there (if not, no
    example lesson asks one).
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
        "Use what was revealed to judge which moves would have found it sooner; it stays "
        "out of the lesson.\n"
        if hidden
        else ""
    )
    result = f"reward {reward:.2f}"
    if score is not None and abs(score - reward) > 1e-9:
        result = f"score {score:.2f}, counted as reward {reward:.2f}"
    facts = "\n".join(
        f"- {fact}" for fact in episode_facts(steps, reward if score is None else score)
    )
    text = render(
        "distill" if fields == "all" else "distill_lessons",
        env=env,
        rules=_flat(rules, 600) or "(not recorded)",
        facts=facts or "- nothing unusual",
        reward=result,
        zone=zone,
        zone_meaning=meaning,
        zone_instruction=instruction,
        lesson_examples=ASKING_EXAMPLES if talks else QUERY_EXAMPLES,
        opening=_clip(steps[0].state) if steps else "",
        reveal=reveal,
        episode=episode,
        turns=turns,
        stage=stage or "any",
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


def repeats(steps: list[Exploration], i: int) -> list[int]:
    """The earlier turns (from 1) whose move step ``i`` repeats: the same ``[action]`` or
    ``[search]`` word for word, or, for an answer, every earlier answer."""
    kind = move_kind(steps[i].action)
    if kind == "answer":
        return [s.turn + 1 for s in steps[:i] if move_kind(s.action) == "answer"]
    if kind in ("action", "search"):
        gist = move_gist(steps[i].action)
        return [s.turn + 1 for s in steps[:i] if move_gist(s.action) == gist]
    return []


def turn_notes(steps: list[Exploration], i: int) -> list[str]:
    """What code can tell about one move: an answer before any question, a repeat of an
    earlier move, an unreadable message, a reply of "unsure", the reward it earned, the
    turn limit."""
    kinds = [move_kind(s.action) for s in steps[: i + 1]]
    step, kind, notes = steps[i], kinds[i], []
    if kind == "invalid":
        notes.append("this message was not a valid move, so the turn was lost")
    earlier = repeats(steps, i)
    if kind == "answer":
        asked = sum(k in ("action", "search") for k in kinds[:i])
        if not asked:
            notes.append("you answered before asking or querying anything")
        if earlier:
            notes.append(f"you had already answered {_times(len(earlier))}")
    if kind in ("action", "search"):
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
    the action is the move the environment read (a message it could not read is marked
    ``(not a valid move)``); the outcome its reply and the episode's reward.
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
    action = _flat(step.action, 150)
    if move_kind(step.action) == "invalid":
        action = f"(not a valid move) {action}"
    return situation, action, outcome


@dataclass
class Distilled:
    """What one episode's distillation yields."""

    experiences: list[Experience]
    dropped: list[str] = field(default_factory=list)
    """The lessons not kept, each with why (``"Ask ..." (repeats itself)``)."""
    refined: int = 0
    """Lessons the distiller was asked to rewrite because they failed a check."""


Written = tuple[str, str, str, str, list[str]]
"""Situation, action, outcome, lesson, preconditions of an episode's experience."""


async def _write(
    model: Model,
    messages: list[Message],
    fields: Fields,
    steps: list[Exploration],
    anchor: int,
    reward: float,
) -> tuple[Written, str]:
    """One distiller call: what it wrote for the episode, and its raw reply."""
    config = GenerateConfig(max_tokens=500)
    if fields == "all":
        out = await model.generate(messages, schema=DistilledText, config=config)
        t = out.parsed
        lesson = whole_sentences(t.lesson)
        return (t.situation, t.action, t.outcome, lesson, t.preconditions), out.text
    got = await model.generate(messages, schema=Lesson, config=config)
    return (*grounded(steps, anchor, reward), whole_sentences(got.parsed.lesson), []), got.text


def _refine_request(lesson: str, problems: list[str]) -> str:
    """The follow-up that shows the distiller which checks its lesson failed."""
    return (
        f'This lesson cannot be kept: "{_flat(lesson, 200)}": it '
        + "; it ".join(problems)
        + ".\nWrite it again, in the same form, so that none of these problems remains."
    )


async def distill(
    model: Model,
    record: SessionRecord,
    *,
    library_id: str,
    iteration: int,
    credit: Credit | dict[str, Credit] | None = None,
    k: int = 3,
    reveal_hidden: bool = False,
    fields: Fields = "lesson",
    refine: bool = True,
    reward_of: TrajectoryReward = "score",
) -> Distilled:
    """One experience from one episode, from its key turns and the stage of the one with
    the most credit: generate, verify, refine (key turns, stage, zone and conditions by
    code; one memory-model call, two when the lesson fails a check and ``refine`` is on).

    ``reveal_hidden``: show the distiller what the episode kept hidden (`EpisodeSummary.hidden`).
    The lesson is checked by code (`lesson_problems`: too short, not English, looping,
    naming the episode's answer (`EpisodeSummary.secrets`), copying the environment's reply,
    speaking of the scoring, a false "again", asking where nobody answers). With ``refine``
    the distiller sees what failed and writes it again; a lesson that still fails is
    dropped, and why is kept in `Distilled.dropped`. ``fields``: ``lesson`` has the model
    write only the lesson while situation, action and outcome come from the log at the
    key turn with the most credit (`grounded`): what a small model writes for those is
    often wrong; ``all`` has it write every field and the preconditions. ``reward_of``:
    the reward that sets the zone (see `trajectory_reward`).
    """
    steps = explorations(record)
    if not steps or not isinstance(record.outcome, RewardedEpisode):
        return Distilled([])
    episode_outcome = record.outcome.episode_summary()
    rewards = [s.reward for s in steps]
    score = episode_outcome.score
    reward = trajectory_reward(rewards, score, reward_of, success=episode_outcome.success)
    method = credit_for(episode_outcome.env, credit)
    keys = key_turns(rewards, trajectory_reward=reward, method=method, k=k)
    anchor = anchor_turn(rewards, keys, method=method)
    zone = zone_of(reward)
    env, horizon = episode_outcome.env, episode_outcome.horizon
    stage = stage_of(steps[anchor].turn, horizon)
    hidden = episode_outcome.hidden if reveal_hidden else None
    prompt = distill_prompt(
        env,
        steps,
        keys,
        reward,
        zone,
        hidden if isinstance(hidden, dict) else None,
        fields,
        stage=stage,
        score=score,
        rules=episode_outcome.rules,
        talks=episode_outcome.talks,
    )
    written, reply = await _write(model, prompt, fields, steps, anchor, reward)
    facts = TurnFacts(
        turn=steps[anchor].turn + 1,
        repeated=any(repeats(steps, key) for key in keys),
        talks=episode_outcome.talks,
        moves=list(episode_outcome.moves),
        secrets=list(episode_outcome.secrets),
        replies=[s.observation for s in steps],
    )
    problems = lesson_problems(written[3], facts)
    refined = int(refine and bool(problems))
    if refined:
        retry = retry_messages(prompt, reply, _refine_request(written[3], problems))
        try:
            written, _ = await _write(model, retry, fields, steps, anchor, reward)
            problems = lesson_problems(written[3], facts)
        except ModelError:  # the first lesson stands, and is dropped for what it failed
            pass
    situation, action, outcome, lesson_text, preconditions = written
    if problems:
        return Distilled([], [f'"{_flat(lesson_text, 120)}" ({"; ".join(problems)})'], refined)
    step = steps[anchor]
    before = [(x.action, x.observation) for x in steps[:anchor]]
    source = f"{record.condition}/{record.user_id}/{record.spec_id}"
    experience = Experience(
        id=library_id,
        situation=situation,
        action=action,
        outcome=outcome,
        lesson=lesson_text.strip(),
        stage=stage,
        zone=zone,
        state=compact_situation(env, stage, before),
        conditions=Conditions(
            envs=[env],
            turn_range=(steps[keys[0]].turn, steps[keys[-1]].turn),
            preconditions=_distinct(preconditions),
        ),
        created_iteration=iteration,
        provenance=[Provenance(session=record.index, turn=step.record_turn, source=source)],
        events=[
            ExperienceEvent(
                iteration=iteration,
                kind="created",
                note=f"distilled from {source} ({zone}, reward {reward:.2f}; key turns "
                + ", ".join(str(steps[key].turn + 1) for key in keys)
                + ")",
            )
        ],
    )
    return Distilled([experience], [], refined)
