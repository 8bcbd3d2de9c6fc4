"""A real-user study's design: study types, their problems, the preferences participants
adopt, the memory conditions, and how participants are assigned (counterbalanced)."""

from __future__ import annotations

import functools
import itertools
import random
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..collab import Preference, Taxonomy
from ._prefs import Granularity, find_preference, granularity_of, preference_pool

AppStudy = Literal["coding", "mixed"]
"""The two studies of the authors' app: single-domain coding, mixed domains."""

BlockDesign = Literal["all", "one_type"]
"""``all``: every participant does every study type under every condition; ``one_type``:
one study type per participant."""

SESSIONS = 3
"""Sessions per condition block, as in MultiSessionCollab's user study."""

MAX_MESSAGE_CHARS = 4000
MAX_PARTICIPANTS = 10_000


class DesignError(ValueError):
    """A study design that cannot be used (one line saying what and where)."""


class StudyProblem(BaseModel):
    """One problem a participant works on with the agent in one session."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.-]+$")
    domain: Literal["coding", "writing", "maths"]
    kind: str = Field(min_length=1, max_length=80)
    """debugging, implementation, object-oriented design, creative writing, word problem ..."""
    title: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=20_000)
    """The problem in Markdown, as participant and agent see it."""


class StudyType(BaseModel):
    """One of the study's types (the paper's: single-domain coding, mixed domains)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_-]+$")
    name: str = Field(min_length=1, max_length=200)
    problem_sets: list[list[str]] = Field(min_length=1)
    """``SESSIONS`` problem ids per set: one set, played in each of the type's condition
    blocks (``blocks: all``), or one set per condition block in block order (``one_type``)."""
    granularity: Granularity = "general"
    """How specific the type's preferences are, as in MultiSessionCollab's user study:
    ``general`` ones hold for any task (collab taxonomy; its mixed study); ``domain`` ones
    speak of the one domain all the type's problems share (its coding study)."""
    preferences: list[str] = Field(default_factory=list)
    """Preference ids, of the type's granularity, every participant of this type adopts."""
    draw_preferences: int = Field(default=0, ge=0, le=6)
    """Instead: draw this many compatible preferences per participant, one per category."""
    app_study: AppStudy | None = None
    """Which study of the authors' app this type stands for (``coding``, ``mixed``): with
    the design's ``problems_from``, the type plays that study's problems and shows its
    preferences in the app's words."""
    preference_texts: list[str] = Field(default_factory=list)
    """The preferences in the words the card shows, one per id in ``preferences`` (set from
    ``problems_from`` at ``create``; empty: the ids' own descriptions)."""

    @model_validator(mode="after")
    def _one_way_to_choose(self) -> StudyType:
        if bool(self.preferences) == bool(self.draw_preferences):
            raise ValueError("give either preferences or draw_preferences")
        if self.preference_texts and len(self.preference_texts) != len(self.preferences):
            raise ValueError("preference_texts holds one text per preference")
        return self


class StudyDesign(BaseModel):
    """A study design file (YAML), validated."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)
    consent: str = Field(min_length=1, max_length=20_000)
    """What participants read and agree to before the first session (Markdown)."""
    conditions: list[str] = Field(default_factory=lambda: ["none", "reflection"], min_length=2)
    """Memory methods, one condition block each; ``none`` is the no-memory baseline."""
    blocks: BlockDesign = "all"
    """``all``: every participant does every study type under every condition, the blocks of
    a type on its one problem set; ``one_type``: one study type per participant, one
    problem set per condition block."""
    study_types: list[StudyType] = Field(min_length=1)
    problems: list[StudyProblem] = Field(default_factory=list)
    """Problems of the design's own, beside the shipped ones (same ids replace them)."""
    max_message_chars: int = Field(default=MAX_MESSAGE_CHARS, ge=10, le=20_000)
    seed: int = Field(default=0, ge=0)
    memory_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Options per memory method, over the study's protocol (``reflection``: MSC's notes
    document, no per-turn pick, the app's initial notes); e.g. ``reflection: {select:
    true}``."""
    problems_from: str | None = None
    """A checkout of the authors' user-study app (``Shuhaibm/collaborative-agents-human-
    study``): at ``create`` the study types with an ``app_study`` take its problems and
    preference wordings, and reflection its initial notes (None: rapport's own)."""

    @model_validator(mode="after")
    def _consistent(self) -> StudyDesign:
        if len(set(self.conditions)) != len(self.conditions):
            raise ValueError("conditions: each memory may appear once")
        unused = sorted(set(self.memory_options) - set(self.conditions))
        if unused:
            raise ValueError(f"memory_options: '{unused[0]}' is not one of the conditions")
        if len({t.id for t in self.study_types}) != len(self.study_types):
            raise ValueError("study_types: duplicate id")
        bank = self.problem_bank()
        for t in self.study_types:
            where = f"study_types.{t.id}"
            wanted = 1 if self.blocks == "all" else len(self.conditions)
            if len(t.problem_sets) != wanted:
                raise ValueError(
                    f"{where}: blocks {self.blocks} takes {wanted} problem set"
                    f"{'s' if wanted > 1 else ''} per study type, got {len(t.problem_sets)}"
                )
            for problems in t.problem_sets:
                if len(problems) != SESSIONS:
                    raise ValueError(f"{where}: each problem set holds {SESSIONS} problems")
                missing = [p for p in problems if p not in bank]
                if missing:
                    raise ValueError(f"{where}: unknown problem '{missing[0]}'")
            self._check_preferences(t, where)
        return self

    def _check_preferences(self, t: StudyType, where: str) -> None:
        pool = self.preference_pool(t)
        for pref in t.preferences:
            if pref in pool:
                continue
            scope = granularity_of(pref)
            if scope is None:
                raise ValueError(f"{where}: unknown preference '{pref}'")
            raise ValueError(
                f"{where}: preference '{pref}' is a {scope} one, not of granularity {t.granularity}"
            )
        if t.preferences and not pool.compatible(t.preferences):
            raise ValueError(f"{where}: the preferences conflict with each other")
        if t.draw_preferences > len(pool.categories()):
            raise ValueError(
                f"{where}: cannot draw {t.draw_preferences} preferences from "
                f"{len(pool.categories())} categories of granularity {t.granularity}"
            )

    def preference_pool(self, t: StudyType) -> Taxonomy:
        """The preferences a study type may use, by its granularity and problems' domain.

        Raises:
            ValueError: ``domain`` granularity over problems of several domains, or of a
                domain with no scoped preferences.
        """
        bank = self.problem_bank()
        domains = {bank[p].domain for s in t.problem_sets for p in s if p in bank}
        try:
            return preference_pool(t.granularity, domains)
        except ValueError as exc:
            raise ValueError(f"study_types.{t.id}: {exc}") from None

    def problem_bank(self) -> dict[str, StudyProblem]:
        """Every problem the design can use: the shipped ones, then its own."""
        return {**shipped_problems(), **{p.id: p for p in self.problems}}

    def study_type(self, id: str) -> StudyType:
        """The study type with this id (KeyError when there is none)."""
        return next(t for t in self.study_types if t.id == id)

    def condition_orders(self) -> list[list[str]]:
        """Every order of the conditions, for counterbalancing."""
        return [list(order) for order in itertools.permutations(self.conditions)]


class Block(BaseModel):
    """One block of a participant's study: a study type under one condition."""

    study_type: str
    condition: str
    problems: list[str]
    """The block's ``SESSIONS`` problem ids, in order."""
    first: int
    """The run store's session index of the block's first session under its condition:
    a condition's blocks number their sessions on, in the design's study-type order."""


class Assignment(BaseModel):
    """What one participant does: their blocks in order, the preferences per study type."""

    participant: str
    study_types: list[str]
    """The study types in the order the participant meets them."""
    order: list[str]
    """The conditions in the order the participant meets them within each study type."""
    blocks: list[Block]
    """Every block, in the order the participant plays them."""
    preferences: dict[str, list[str]]
    """Study type -> the preference ids the participant adopts in it."""

    def block_at(self, condition: str, index: int) -> Block:
        """The block holding a condition's session ``index`` (KeyError when none does)."""
        for block in self.blocks:
            if block.condition == condition and block.first <= index < block.first + SESSIONS:
                return block
        raise KeyError(f"{self.participant}: no session {index} under {condition}")

    def all_preferences(self) -> list[str]:
        """Every preference the participant adopts, over their study types."""
        return list(dict.fromkeys(p for t in self.study_types for p in self.preferences[t]))


def _rotations(items: list[StudyType]) -> list[list[StudyType]]:
    return [items[i:] + items[:i] for i in range(len(items))]


def _schedule(design: StudyDesign) -> list[tuple[list[StudyType], list[str]]]:
    """The (study types, condition order) pairs participants are given in turn."""
    orders = design.condition_orders()
    if design.blocks == "one_type":
        return [([t], o) for o in orders for t in design.study_types]
    return [(types, o) for o in orders for types in _rotations(design.study_types)]


def _blocks(design: StudyDesign, types: list[StudyType], order: list[str]) -> list[Block]:
    ids = {t.id for t in types}
    slots = {t.id: i for i, t in enumerate(x for x in design.study_types if x.id in ids)}
    return [
        Block(
            study_type=t.id,
            condition=c,
            problems=t.problem_sets[0 if design.blocks == "all" else position],
            first=slots[t.id] * SESSIONS,
        )
        for t in types
        for position, c in enumerate(order)
    ]


def _preferences(design: StudyDesign, t: StudyType, i: int) -> list[str]:
    if t.preferences:
        return list(t.preferences)
    rng = random.Random(f"{design.seed}:{i}:{t.id}")
    drawn = design.preference_pool(t).sample_across_categories(rng, t.draw_preferences)
    return [p.id for p in drawn]


def assign(design: StudyDesign, n: int) -> list[Assignment]:
    """`n` participants, counterbalanced; drawn preferences come from the seed.

    ``blocks: all``: each participant plays every study type, each type's blocks one after
    the other (the type's conditions in the participant's condition order); participants
    take every (rotation of the study types, condition order) pair in turn, so with two of
    each a multiple of four participants balances both orders exactly. ``one_type``: each
    takes every (study type, condition order) pair in turn.
    """
    schedule = _schedule(design)
    width = max(2, len(str(n)))
    out = []
    for i in range(n):
        types, order = schedule[i % len(schedule)]
        out.append(
            Assignment(
                participant=f"p{i + 1:0{width}d}",
                study_types=[t.id for t in types],
                order=list(order),
                blocks=_blocks(design, types, order),
                preferences={t.id: _preferences(design, t, i) for t in types},
            )
        )
    return out


def preference_card(ids: list[str], texts: list[str] | None = None) -> list[Preference]:
    """The preferences a participant adopts, as the card shows them: with `texts` (one per
    id; a study type's ``preference_texts``), in those words."""
    card = [find_preference(i) for i in ids]
    if not texts:
        return card
    return [p.model_copy(update={"description": t}) for p, t in zip(card, texts, strict=True)]


@functools.cache
def shipped_problems() -> dict[str, StudyProblem]:
    """The problems shipped with rapport (package data)."""
    text = (resources.files("rapport.envs.study") / "problems.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    return {p.id: p for p in (StudyProblem.model_validate(x) for x in raw["problems"])}


def load_design(path: str | Path) -> StudyDesign:
    """Read and check a design file.

    Raises:
        DesignError: one line naming the file and what is wrong.
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DesignError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DesignError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:200]})") from exc
    if not isinstance(raw, dict):
        raise DesignError(f"{path}: a study design is a mapping (title, consent, study_types ...)")
    try:
        return StudyDesign.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        raise DesignError(f"{path}: {loc + ': ' if loc else ''}{msg}") from None
