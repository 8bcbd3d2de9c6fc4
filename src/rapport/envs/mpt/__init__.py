"""MPT-style personalized tool calling across sessions: a seeded generator, a loader for the
official file layout, a tool-calling agent and the P-EM / OA-F1 / F1 / token-cost metrics."""

from ._agent import call_api, render_instructions
from ._benchmark import MPTBenchmark, MPTOptions, MPTUser
from ._generate import CHALLENGES, QUERY_TYPES, GenerationSettings, generate_user, generate_users
from ._loader import CallParseError, load_official, parse_call
from ._metrics import (
    TOKEN_METHOD,
    bootstrap_ci,
    count_tokens,
    exact_match,
    instance_scores,
    micro_f1,
    oa_counts,
    strict_counts,
    summarize,
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

__all__ = [
    "CHALLENGES",
    "QUERY_TYPES",
    "TOKEN_METHOD",
    "ApiSchema",
    "ArgSpec",
    "CallParseError",
    "GenerationSettings",
    "MPTBenchmark",
    "MPTOptions",
    "MPTUser",
    "arguments_model",
    "bootstrap_ci",
    "call_api",
    "count_tokens",
    "describe",
    "domain_schema",
    "domains",
    "exact_match",
    "generate_user",
    "generate_users",
    "instance_scores",
    "load_official",
    "micro_f1",
    "oa_counts",
    "parse_call",
    "render_instructions",
    "schema_from_json",
    "strict_counts",
    "summarize",
    "validate_call",
]
