"""MultiSessionCollab's published user profiles (``user_profiles.json``) as collab users.

Each profile holds a persona, three categories and three preference texts. A text is
mapped onto our preference id by a phrase that only that preference's text holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rapport._json import loads_strict

from ._personas import Persona, PersonaFileError
from ._profiles import CollabUser

MSC_PHRASES: tuple[tuple[str, str], ...] = (
    ("directly to the point", "direct"),
    ("narrative, conversational", "narrative"),
    ("respectful, considerate", "courteous"),
    ("blunt without pleasantries", "blunt"),
    ("step-by-step reasoning", "stepwise_derivation"),
    ("high-level intuition", "big_picture_first"),
    ("single small increment", "one_step_at_a_time"),
    ("holistic responses", "whole_solution"),
    ("end responses with a proactive suggestion", "suggest_next_step"),
    ("unsolicited suggestions", "no_unsolicited_suggestions"),
    ("key takeaways", "key_takeaways"),
    ("multiple viable approaches", "multiple_approaches"),
    ("outline of what will be covered", "outline_first"),
    ("examples, analogies", "examples_or_analogies"),
    ("no longer than three sentences", "max_three_sentences"),
    ("bullet-point format", "bullet_points"),
    ("numbered steps", "numbered_steps"),
    ("headings for each section", "section_headings"),
    ("tl;dr", "tldr_end"),
    ("confidence estimate", "confidence_estimate"),
)
"""A phrase of MSC's preference text -> our preference id (checked in this order)."""


def msc_preference_id(text: str) -> str:
    """Our id for one of MSC's preference texts.

    Raises:
        KeyError: no known phrase in the text.
    """
    lowered = " ".join(text.lower().split())
    for phrase, pref_id in MSC_PHRASES:
        if phrase in lowered:
            return pref_id
    raise KeyError(f"no collab preference matches {text[:60]!r}")


def load_msc_profiles(path: str | Path) -> list[CollabUser]:
    """Read MSC's ``user_profiles.json``: one user per profile, in file order.

    Users are ``msc-000`` ... (``i`` from the profile when it has one).

    Raises:
        PersonaFileError: the file is missing, not a list of profiles, or a profile holds a
            preference no phrase maps.

    Profiles are taken as published, even where two preferences conflict in our taxonomy
    (MSC holds a few such pairs, e.g. narrative with at most three sentences).
    """
    path = Path(path)
    try:
        data: Any = loads_strict(path.read_text(encoding="utf-8-sig"))
    # ValueError: also JSON's decode error and an integer of more digits than Python reads.
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PersonaFileError(f"cannot read profile file {path}: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise PersonaFileError(f"{path}: expected a non-empty list of profiles")
    users = [_profile(item, path, n) for n, item in enumerate(data)]
    seen: set[str] = set()
    for n, user in enumerate(users):
        if user.id in seen:
            raise PersonaFileError(f"{path}: profile {n} repeats the user id {user.id}")
        seen.add(user.id)
    return users


def _profile(item: Any, path: Path, n: int) -> CollabUser:
    if not isinstance(item, dict) or not isinstance(item.get("preferences"), list):
        raise PersonaFileError(f"{path}: profile {n} has no 'preferences' list")
    if not item["preferences"]:
        raise PersonaFileError(f"{path}: profile {n}'s 'preferences' list is empty")
    texts = item["preferences"]
    if not all(isinstance(text, str) for text in texts):
        raise PersonaFileError(f"{path}: profile {n}: each preference must be text")
    try:
        ids = [msc_preference_id(text) for text in texts]
    except KeyError as exc:
        raise PersonaFileError(f"{path}: profile {n}: {exc.args[0]}") from exc
    worded = dict(zip(ids, texts, strict=True))
    persona = item.get("persona")
    if persona is None:
        persona = ""
    if not isinstance(persona, str):
        raise PersonaFileError(f"{path}: profile {n}: 'persona' must be text")
    profile = Persona(description=persona.strip() or "A user.")
    index = item.get("i", n)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise PersonaFileError(f"{path}: profile {n}: 'i' must be a whole number >= 0")
    return CollabUser(
        id=f"msc-{index:03d}",
        persona=profile.description,
        preferences=list(worded),  # a text repeated is one preference
        preference_texts=list(worded.values()),
        profile=profile,
    )
