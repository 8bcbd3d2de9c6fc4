"""MultiSessionCollab: simulated users with preferences, one problem per session."""

from ._ablation import DEFAULT_LEARNED_MEMORY, CollabAblationBenchmark
from ._agreement import (
    agreement_table,
    dataset_of,
    enforcement_agreement,
    prompts_table,
    protocol_table,
)
from ._benchmark import CollabBenchmark, protocol_of
from ._cases import CaseResult, CheckerAgreement, CheckerCase, checker_agreement, checker_cases
from ._checkers import CHECKERS, Checker, check_preference, gives_answer, is_clarifying_question
from ._grading import Grade, grade, grading_messages
from ._loaders import is_msc_cache
from ._msc_profiles import MSC_PHRASES, load_msc_profiles, msc_preference_id
from ._msc_prompts import (
    MSC_END_TOKEN,
    MscPromptsError,
    SessionPrompts,
    Template,
    load_msc_prompts,
    packaged_prompts,
)
from ._msc_user import (
    MscPublishedPlainTurn,
    MscPublishedTurn,
    MscUser,
    MscUserTurn,
    PreferenceCheck,
    PreferenceWords,
)
from ._options import CollabOptions
from ._paper import COLLAB_PAPER, MSC_DATASETS
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
from ._presets import SMALL_PRESET
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
from ._session import OPENING, CollabEpisode, Protocol, SessionSettings, problem_text, task_line
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
    "COLLAB_PAPER",
    "DEFAULT_LEARNED_MEMORY",
    "MSC_DATASETS",
    "MSC_END_TOKEN",
    "MSC_PHRASES",
    "OPENING",
    "PREFERENCES_PER_USER",
    "SMALL_PRESET",
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
    "Grade",
    "MscPromptsError",
    "MscPublishedPlainTurn",
    "MscPublishedTurn",
    "MscUser",
    "MscUserTurn",
    "NotCheckableError",
    "Persona",
    "PersonaFileError",
    "Preference",
    "PreferenceCheck",
    "PreferenceDecision",
    "PreferenceJudgement",
    "PreferenceVerdictEvent",
    "PreferenceWords",
    "Problem",
    "ProblemSourceError",
    "Protocol",
    "RuleUser",
    "SessionPrompts",
    "SessionSettings",
    "Taxonomy",
    "TaxonomyError",
    "Template",
    "UserReaction",
    "UserReply",
    "agreement_table",
    "as_collab_user",
    "attribute_lists",
    "check_preference",
    "checker_agreement",
    "checker_cases",
    "count_sentences",
    "dataset_of",
    "decide_preferences",
    "enforcement_agreement",
    "enforcement_lines",
    "generate_persona",
    "generate_personas",
    "gives_answer",
    "grade",
    "grading_messages",
    "is_clarifying_question",
    "is_correct",
    "is_msc_cache",
    "letter",
    "load_msc_profiles",
    "load_msc_prompts",
    "load_personas_jsonl",
    "load_problems",
    "load_taxonomy",
    "make_users",
    "msc_preference_id",
    "packaged_prompts",
    "pastes",
    "problem_text",
    "prompts_table",
    "protocol_of",
    "protocol_table",
    "render_transcript",
    "split_sentences",
    "task_line",
    "truth_text",
    "vague_opening",
]
