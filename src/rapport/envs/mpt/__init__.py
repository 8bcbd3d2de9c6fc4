"""MPT-style personalized tool calling across sessions: a seeded generator, the public PRefine
release built by its own rules, a tool-calling agent and the P-EM / OA-F1 / F1 / token-cost
metrics scored as PRefine scores them."""

from ._agent import render_instructions
from ._benchmark import MPTBenchmark, MPTOptions, MPTUser
from ._dates import DateparserMissing
from ._generate import CHALLENGES, QUERY_TYPES, GenerationSettings, generate_user, generate_users
from ._loader import CallParseError, parse_call
from ._metrics import (
    DateRule,
    call_counts,
    exact_match,
    instance_scores,
    micro_f1,
    normalize,
    oa_counts,
    strict_counts,
    summarize,
)
from ._release import (
    DIFFICULTIES,
    TURNS,
    ReleaseLayoutError,
    load_release,
    read_release,
    release_users,
    scenario_counts,
)
from ._schema import (
    ApiSchema,
    ArgSpec,
    arguments_model,
    describe,
    domain_schema,
    domains,
    schema_from_json,
    validate_call,
)
from ._tokens import TOKEN_METHOD, TokenCounter, count_tokens
from ._types import (
    Call,
    MPTEvalOutcome,
    MPTEvalTask,
    MPTHistoryOutcome,
    MPTHistorySession,
    MPTHistoryTask,
    MPTInstance,
    Utterance,
)

__all__ = [
    "CHALLENGES",
    "DIFFICULTIES",
    "QUERY_TYPES",
    "TOKEN_METHOD",
    "TURNS",
    "ApiSchema",
    "ArgSpec",
    "Call",
    "CallParseError",
    "DateRule",
    "DateparserMissing",
    "GenerationSettings",
    "MPTBenchmark",
    "MPTEvalOutcome",
    "MPTEvalTask",
    "MPTHistoryOutcome",
    "MPTHistorySession",
    "MPTHistoryTask",
    "MPTInstance",
    "MPTOptions",
    "MPTUser",
    "ReleaseLayoutError",
    "TokenCounter",
    "Utterance",
    "arguments_model",
    "call_counts",
    "count_tokens",
    "describe",
    "domain_schema",
    "domains",
    "exact_match",
    "generate_user",
    "generate_users",
    "instance_scores",
    "load_release",
    "micro_f1",
    "normalize",
    "oa_counts",
    "parse_call",
    "read_release",
    "release_users",
    "render_instructions",
    "scenario_counts",
    "schema_from_json",
    "strict_counts",
    "summarize",
    "validate_call",
]
