"""Simulated users of every benchmark.

MultiSessionCollab's users are exported here: personas, user profiles (ours and MSC's), the
LLM user simulator and the rule user. PrefIx's simulated user is `rapport.users.prefix`. MPT
has no simulator (its sessions are dialogues generated or read from the release); the gyms'
users are each gym's own environment logic.
"""

from ._msc_profiles import MSC_PHRASES, load_msc_profiles, msc_preference_id
from ._personas import (
    ATTRIBUTES,
    Persona,
    PersonaFileError,
    attribute_lists,
    generate_persona,
    generate_personas,
    load_personas_jsonl,
)
from ._profiles import PREFERENCES_PER_USER, CollabUser, as_collab_user, make_users, truth_text
from ._rule_user import AnswerExtractor, NotCheckableError, RuleUser, enforcement_lines
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
    "MSC_PHRASES",
    "PREFERENCES_PER_USER",
    "AnswerExtractor",
    "CollabUser",
    "NotCheckableError",
    "Persona",
    "PersonaFileError",
    "PreferenceDecision",
    "PreferenceJudgement",
    "RuleUser",
    "UserReaction",
    "UserReply",
    "UserSimulator",
    "as_collab_user",
    "attribute_lists",
    "decide_preferences",
    "enforcement_lines",
    "generate_persona",
    "generate_personas",
    "load_msc_profiles",
    "load_personas_jsonl",
    "make_users",
    "msc_preference_id",
    "pastes",
    "render_transcript",
    "truth_text",
    "vague_opening",
]
