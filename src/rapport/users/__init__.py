"""Simulated users: personas, MultiSessionCollab user profiles and the user simulator."""

from ._personas import (
    ATTRIBUTES,
    Persona,
    PersonaFileError,
    attribute_lists,
    generate_persona,
    generate_personas,
    load_personas_jsonl,
)
from ._profiles import PREFERENCES_PER_USER, CollabUser, as_collab_user, make_users
from ._rules import (
    END_TOKEN,
    PreferenceDecision,
    PreferenceJudgement,
    UserReaction,
    decide_preferences,
)
from ._simulator import UserReply, UserSimulator, pastes, render_transcript, vague_opening

__all__ = [
    "ATTRIBUTES",
    "END_TOKEN",
    "PREFERENCES_PER_USER",
    "CollabUser",
    "Persona",
    "PersonaFileError",
    "PreferenceDecision",
    "PreferenceJudgement",
    "UserReaction",
    "UserReply",
    "UserSimulator",
    "as_collab_user",
    "attribute_lists",
    "decide_preferences",
    "generate_persona",
    "generate_personas",
    "load_personas_jsonl",
    "make_users",
    "pastes",
    "render_transcript",
    "vague_opening",
]
