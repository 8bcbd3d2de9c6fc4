"""A judge module in the layout of a PrefIX checkout's; every text in it is ours.

rapport reads ``LIKERT_DEFINITIONS`` and the per-dimension prompt f-strings from it as
literals and never runs it. Like the published
module it declares the anchor dataclass and two result dataclasses (annotated fields, one
with ``field(default_factory=...)``) before the table, annotates the table with
``typing.Dict``, and reads it again by subscript in a function after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional  # noqa: UP035


@dataclass
class LikertDefinition:
    anchor_1: str
    anchor_2: str
    anchor_3: str
    anchor_4: str
    anchor_5: str


@dataclass
class JudgmentDimension:
    score: int
    justification: str
    evidence_turn_ids: List[str] = field(default_factory=list)  # noqa: UP006


@dataclass
class JudgmentResult:
    model_name: str
    parsed: Optional[Dict[str, Any]]  # noqa: UP006, UP045
    errors: List[str] = field(default_factory=list)  # noqa: UP006


LIKERT_DEFINITIONS: Dict[str, LikertDefinition] = {  # noqa: UP006
    "initiative_timing": LikertDefinition(
        anchor_1="Fixture: steps in before it is asked or stalls when it should act.",
        anchor_2="Fixture: several moves come too soon or too late.",
        anchor_3="Fixture: mostly on time; a few moves early or late.",
        anchor_4="Fixture: on time but for one small slip.",
        anchor_5="Fixture: every move comes when the user wants it.",
    ),
    "interaction_preference_alignment": LikertDefinition(
        anchor_1="Fixture: works against the way this user asked to be served.",
        anchor_2="Fixture: follows the user's way now and then, breaks it more often.",
        anchor_3="Fixture: follows the user's way about half the time.",
        anchor_4="Fixture: follows the user's way with a slip or two.",
        anchor_5="Fixture: follows the user's way from the first turn to the last.",
    ),
    "interaction_coherence": LikertDefinition(
        anchor_1="Fixture: forgets what was said and contradicts itself.",
        anchor_2="Fixture: loses the thread several times.",
        anchor_3="Fixture: holds together with small lapses.",
        anchor_4="Fixture: consistent, with one harmless repeat.",
        anchor_5="Fixture: consistent throughout.",
    ),
    "intent_alignment_drift": LikertDefinition(
        anchor_1="Fixture: pursues a goal the user has left behind.",
        anchor_2="Fixture: keeps falling back to an older request.",
        anchor_3="Fixture: tracks the current request with a small wander.",
        anchor_4="Fixture: tracks the current request; one wander it fixes itself.",
        anchor_5="Fixture: always on the request the user holds now.",
    ),
    "commitment_consistency": LikertDefinition(
        anchor_1="Fixture: says one thing and does another without a word.",
        anchor_2="Fixture: drops several things it said it would do.",
        anchor_3="Fixture: does most of what it says; explains some gaps.",
        anchor_4="Fixture: does what it says; one late item, explained.",
        anchor_5="Fixture: does all it says, or says plainly why not.",
    ),
    "interaction_efficiency": LikertDefinition(
        anchor_1="Fixture: asks the same things over and takes the long way round.",
        anchor_2="Fixture: many steps that could be dropped.",
        anchor_3="Fixture: some wasted steps.",
        anchor_4="Fixture: hardly a wasted step.",
        anchor_5="Fixture: the shortest route there is.",
    ),
    "user_cognitive_load_trajectory": LikertDefinition(
        anchor_1="Fixture: the user is more lost at the end than at the start.",
        anchor_2="Fixture: adds needless detail the user must sort out.",
        anchor_3="Fixture: the user is about as clear at the end as at the start.",
        anchor_4="Fixture: the user grows clearer as it goes.",
        anchor_5="Fixture: the user always knows where things stand.",
    ),
    "overall_user_experience": LikertDefinition(
        anchor_1="Fixture: this user would not come back.",
        anchor_2="Fixture: this user would come back only if they had to.",
        anchor_3="Fixture: this user found it fair.",
        anchor_4="Fixture: this user would come back.",
        anchor_5="Fixture: this user would recommend it.",
    ),
}

TARGET_DIMS = [
    "initiative_timing",
    "interaction_coherence",
    "intent_alignment_drift",
    "commitment_consistency",
    "interaction_efficiency",
    "user_cognitive_load_trajectory",
    "interaction_preference_alignment",
    "overall_user_experience",
]


def _anchor_lines(dim_name: str) -> List[str]:  # noqa: UP006
    anchors = LIKERT_DEFINITIONS[dim_name]
    return [f"{n}: {getattr(anchors, f'anchor_{n}')}" for n in range(1, 6)]


def _build_single_dimension_prompt(
    persona: str,
    persona_description: str,
    persona_trajectory: str,
    transcript_text: str,
    dim_name: str,
) -> str:
    anchor_text = "\n".join(_anchor_lines(dim_name))
    return f"""Fixture judge. Persona: {persona}
About them: {persona_description}
Hints: {persona_trajectory}
Log:
{transcript_text}
Rate {dim_name} with:
{anchor_text}
Answer as JSON {{"dimension": "{dim_name}", "score": 0}}.
"""


def generate_judgment_with_openrouter(persona: str, transcript_text: str) -> str:
    system_instruction = f"Fixture system line. For: {persona}"
    return system_instruction + transcript_text
