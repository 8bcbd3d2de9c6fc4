"""User profiles for MultiSessionCollab: a persona plus three non-conflicting preferences."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import Field

from rapport.log import UserSpec

from ._personas import Persona, generate_persona
from ._taxonomy import Preference, load_taxonomy

PREFERENCES_PER_USER = 3


class CollabUser(UserSpec):
    """A simulated MultiSessionCollab user.

    `persona` (inherited) is the persona's description; `preferences` (inherited) the ids of
    the preferences the user holds, resolved against the ``collab`` taxonomy.
    """

    profile: Persona
    """The structured persona the description came from."""
    dataset: str = ""
    """The MSC dataset whose problems this user brings (a run over several of MSC's cached
    datasets has users of its own per dataset); empty: the run's one pool."""
    preference_texts: list[str] = Field(default_factory=list)
    """The preferences in the words of the profile file they were read from (one per id, in
    order); empty: the taxonomy's descriptions are their words."""

    def preference_wording(self) -> list[str]:
        """Each preference as the user simulator is told it: the profile's own text, else
        the taxonomy's description."""
        if self.preference_texts:
            return list(self.preference_texts)
        return [" ".join(p.description.split()) for p in self.preference_objects()]

    def preference_objects(self) -> list[Preference]:
        """The user's preferences, in order, from the ``collab`` taxonomy."""
        taxonomy = load_taxonomy("collab")
        return [taxonomy.get(pid) for pid in self.preferences]

    def truth(self) -> str:
        """The user's true preferences as the test each reply must pass (what the
        ``oracle`` memory puts before the agent).

        The criterion, not the self-description: the description is written to the user
        ("You want ..."), which an agent reading it as its own instructions misapplies.
        """
        return truth_text(self.preference_objects())


def truth_text(preferences: Sequence[Preference]) -> str:
    """Preferences as the test each reply must pass, one line each (the ``oracle`` text)."""
    return "\n".join(f"- {p.name}: {' '.join(p.enforcement.split())}" for p in preferences)


def make_users(
    n: int,
    seed: int,
    personas: Sequence[Persona] | None = None,
    *,
    checkable_only: bool = False,
    split: Literal["eval", "train"] = "eval",
    within: Collection[str] | None = None,
) -> list[CollabUser]:
    """`n` reproducible users: the same seed gives the same profiles, byte for byte.

    Each user holds three preferences from three different categories (as MSC's profiles
    do). User ``i`` depends only on ``seed``, ``split`` and ``i``, so a run with more users
    extends a smaller one. With `personas` (e.g. from `load_personas_jsonl`), user ``i``
    takes a persona drawn from that list instead of a generated one.

    Args:
        n: how many users.
        seed: the draw's seed.
        personas: personas to draw from; None: generated ones.
        checkable_only: only preferences a deterministic checker decides (the rule user).
        split: ``train`` and ``eval`` users are drawn from disjoint streams, and their ids
            differ (``train-000`` ...), so a train split never holds an eval user.

    Raises:
        ValueError: `n` is negative or `personas` is empty.
    """
    if n < 0:
        raise ValueError(f"number of users must be >= 0, got {n}")
    if personas is not None and not personas:
        raise ValueError("the persona list is empty")
    taxonomy = load_taxonomy("collab")
    users = []
    for i in range(n):
        stream = "collab-user" if split == "eval" else f"collab-{split}-user"
        rng = random.Random(f"{stream}:{seed}:{i}")
        persona = rng.choice(list(personas)) if personas else generate_persona(rng)
        prefs = taxonomy.sample_across_categories(
            rng, k=PREFERENCES_PER_USER, checkable_only=checkable_only, within=within
        )
        users.append(
            CollabUser(
                id=f"{'user' if split == 'eval' else split}-{i:03d}",
                persona=persona.description,
                preferences=[p.id for p in prefs],
                profile=persona,
            )
        )
    return users


def as_collab_user(user: UserSpec) -> CollabUser:
    """The same user as a `CollabUser` (a runner may hand back a plain `UserSpec`)."""
    if isinstance(user, CollabUser):
        return user
    data = user.model_dump()
    data.setdefault("profile", {"description": user.persona})
    return CollabUser.model_validate(data)
