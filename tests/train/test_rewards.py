from __future__ import annotations

import json
import re

import pytest

from rapport.llm import Model, Request, ScriptedAPI
from rapport.train import (
    EnforcedPreference,
    JudgeReward,
    PreferenceMatcher,
    coverage_reward,
    format_reward,
    load_preferences,
    make_reward_funcs,
    render_reflection,
    template_note,
)

PREFS = load_preferences("collab")
MATCHER = PreferenceMatcher(PREFS)
ENFORCED = ["bullet_points", "max_three_sentences"]

FULL = render_reflection(
    "The user asked twice for a different shape of reply.",
    ["Format replies as bullet points.", "Keep replies to at most three sentences."],
)
MISSES_ONE = render_reflection("The user asked for bullets.", ["Format replies as bullet points."])
INVENTS_ONE = render_reflection(
    "The user asked twice for a different shape of reply.",
    [
        "Format replies as bullet points.",
        "Keep replies to at most three sentences.",
        "End every answer with a one-line TL;DR summary.",
    ],
)


def test_format_reward_full_partial_and_none():
    assert format_reward(FULL) == 1.0
    assert 0 < format_reward("<reasoning>why</reasoning> - bullet points") < 1
    assert format_reward("just some text") == 0.0
    assert format_reward("<notes>\n- a\n</notes><reasoning>x</reasoning>") < 1.0


def test_matcher_maps_paraphrased_notes_to_taxonomy_ids():
    assert MATCHER.match("Format replies as bullet points.") == "bullet_points"
    assert MATCHER.match("Keep replies to at most three sentences.") == "max_three_sentences"
    assert MATCHER.match("End every answer with a one-line TL;DR summary.") == "tldr_end"


def test_coverage_reward_prefers_the_complete_honest_reflection():
    full = coverage_reward(FULL, ENFORCED, [], MATCHER)
    assert full == 1.0
    assert coverage_reward(MISSES_ONE, ENFORCED, [], MATCHER) < full
    assert coverage_reward(INVENTS_ONE, ENFORCED, [], MATCHER) < full
    assert coverage_reward("no tags at all", ENFORCED, [], MATCHER) == 0.0


def test_notes_from_earlier_sessions_are_not_inventions():
    assert coverage_reward(INVENTS_ONE, ENFORCED, ["tldr_end"], MATCHER) == 1.0


def _fair_judge(request: Request) -> str:
    """A scripted judge: a preference is captured when a note shares its key word."""
    prompt = request.messages[-1].content
    ids = re.findall(r"^- (\w+): ", prompt, re.MULTILINE)
    notes = re.findall(r"^(\d+)\. (.*)$", prompt, re.MULTILINE)
    key = {"bullet_points": "bullet", "max_three_sentences": "three", "tldr_end": "tl;dr"}
    captured = [
        {"preference_id": i, "captured": any(key[i] in n.lower() for _, n in notes)} for i in ids
    ]
    supported = [
        {"note": int(k), "supported": any(key[i] in n.lower() for i in ids)} for k, n in notes
    ]
    return json.dumps({"preferences": captured, "notes": supported})


@pytest.fixture
def judge() -> JudgeReward:
    return JudgeReward(Model(ScriptedAPI(responder=_fair_judge), role="judge"), PREFS)


ENFORCED_EVENTS = [
    EnforcedPreference(preference_id="bullet_points", turn=2, utterance="Use bullet points."),
    EnforcedPreference(preference_id="max_three_sentences", turn=4, utterance="Shorter!"),
]


async def test_judge_reward_prefers_the_complete_honest_reflection(judge):
    full = await judge.score(FULL, ENFORCED_EVENTS)
    assert full == 1.0
    assert (await judge.score(MISSES_ONE, ENFORCED_EVENTS) or 0) < full
    assert (await judge.score(INVENTS_ONE, ENFORCED_EVENTS) or 0) < full


async def test_judge_sees_the_users_words_and_unparseable_costs_no_call():
    api = ScriptedAPI(responder=_fair_judge)
    judge = JudgeReward(Model(api, role="judge"), PREFS)
    assert await judge.score("no layout", ENFORCED_EVENTS) == 0.0
    assert api.requests == []
    await judge.score(FULL, ENFORCED_EVENTS)
    assert 'The user said: "Use bullet points."' in api.requests[0].messages[-1].content


async def test_judge_failure_gives_no_reward_instead_of_crashing():
    judge = JudgeReward(Model(ScriptedAPI(responder=lambda _r: "not json"), role="judge"), PREFS)
    assert await judge.score(FULL, ENFORCED_EVENTS) is None


async def test_trl_reward_functions_read_conversational_completions():
    judge_model = Model(ScriptedAPI(responder=_fair_judge), role="judge")
    funcs, weights = make_reward_funcs(
        {"coverage": 1.0, "format": 0.5, "judge": 1.0}, PREFS, judge_model
    )
    coverage, fmt, judged = funcs
    completions = [[{"role": "assistant", "content": t}] for t in (FULL, MISSES_ONE)]
    columns = {
        "enforced_ids": [ENFORCED] * 2,
        "known_ids": [[], []],
        "enforced_json": [[e.model_dump_json() for e in ENFORCED_EVENTS]] * 2,
        "prior_notes": [[], []],
    }
    assert weights == [1.0, 0.5, 1.0]
    first, second = coverage(completions=completions, **columns)
    assert first > second
    assert fmt(completions=completions, **columns) == [1.0, 1.0]
    judged_scores = await judged(completions=completions, **columns)
    assert judged_scores[0] > judged_scores[1]


def test_reward_weights_are_checked():
    with pytest.raises(ValueError, match="unknown reward"):
        make_reward_funcs({"length": 1.0}, PREFS)
    with pytest.raises(ValueError, match="judge_model"):
        make_reward_funcs({"judge": 1.0}, PREFS)


def test_every_taxonomy_description_and_template_note_matches_its_own_preference():
    identity = {pid: pid for pid in PREFS}
    assert {pid: MATCHER.match(p.description) for pid, p in PREFS.items()} == identity
    assert {pid: MATCHER.match(template_note(pid, PREFS)) for pid in PREFS} == identity
