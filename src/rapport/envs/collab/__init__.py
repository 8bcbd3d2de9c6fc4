"""MultiSessionCollab: simulated users with preferences, one problem per session."""

from ._ablation import DEFAULT_LEARNED_MEMORY, CollabAblationBenchmark
from ._agreement import agreement_table, enforcement_agreement
from ._benchmark import CollabBenchmark, CollabOptions
from ._cases import CaseResult, CheckerAgreement, CheckerCase, checker_agreement, checker_cases
from ._checkers import CHECKERS, Checker, check_preference, gives_answer, is_clarifying_question
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
from ._phrasings import enforcement_lines
from ._problems import ProblemSourceError, is_correct
from ._profiles import PREFERENCES_PER_USER, CollabUser, as_collab_user, make_users, truth_text
from ._rule_user import AnswerExtractor, NotCheckableError, RuleUser
from ._rules import (
    COLLAB_END_TOKEN,
    PreferenceDecision,
    PreferenceJudgement,
    UserReaction,
    decide_preferences,
)
from ._session import CollabEpisode, SessionSettings, problem_text
from ._simulator import CollabUserSimulator, UserReply, pastes, render_transcript, vague_opening
from ._sources import load_problems
from ._taxonomy import Preference, Taxonomy, TaxonomyError, load_taxonomy
from ._text import count_sentences, split_sentences
from ._types import (
    CollabOutcome,
    CollabTask,
    DraftUpdateEvent,
    EnforcementEvent,
    PreferenceVerdictEvent,
    Problem,
    letter,
)

__all__ = [
    "ATTRIBUTES",
    "CHECKERS",
    "COLLAB_END_TOKEN",
    "DEFAULT_LEARNED_MEMORY",
    "MSC_PHRASES",
    "PREFERENCES_PER_USER",
    "AnswerExtractor",
    "CaseResult",
    "Checker",
    "CheckerAgreement",
    "CheckerCase",
    "CollabAblationBenchmark",
    "CollabBenchmark",
    "CollabEpisode",
    "CollabOptions",
    "CollabOutcome",
    "CollabTask",
    "CollabUser",
    "CollabUserSimulator",
    "DraftUpdateEvent",
    "EnforcementEvent",
    "NotCheckableError",
    "Persona",
    "PersonaFileError",
    "Preference",
    "PreferenceDecision",
    "PreferenceJudgement",
    "PreferenceVerdictEvent",
    "Problem",
    "ProblemSourceError",
    "RuleUser",
    "SessionSettings",
    "Taxonomy",
    "TaxonomyError",
    "UserReaction",
    "UserReply",
    "agreement_table",
    "as_collab_user",
    "attribute_lists",
    "check_preference",
    "checker_agreement",
    "checker_cases",
    "count_sentences",
    "decide_preferences",
    "enforcement_agreement",
    "enforcement_lines",
    "generate_persona",
    "generate_personas",
    "gives_answer",
    "is_clarifying_question",
    "is_correct",
    "letter",
    "load_msc_profiles",
    "load_personas_jsonl",
    "load_problems",
    "load_taxonomy",
    "make_users",
    "msc_preference_id",
    "pastes",
    "problem_text",
    "render_transcript",
    "split_sentences",
    "truth_text",
    "vague_opening",
]
