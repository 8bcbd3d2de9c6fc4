"""The multi-judge Likert scorer: means over judges, validated evidence, errors recorded."""

from __future__ import annotations

import json

from rapport.judges import Dimension, MultiJudge, judge_means_from_events
from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI

DIMS = [
    Dimension(
        id="clarity", name="Clarity", question="Clear?", anchors={1: "no", 3: "so so", 5: "yes"}
    ),
    Dimension(id="pace", name="Pace", question="Well paced?", anchors={1: "no", 5: "yes"}),
]


def _verdict(score: int, turns: list[int]) -> str:
    entry = {"score": score, "justification": "because", "evidence_turns": turns}
    return json.dumps({"clarity": entry, "pace": entry})


async def test_the_score_is_the_mean_over_judges_of_their_mean_over_repeats() -> None:
    models = ModelRoles(
        {
            "judge": ScriptedAPI([_verdict(2, [0]), _verdict(4, [1])]),
            "judge2": ScriptedAPI([_verdict(5, [1])] * 2),
        }
    )
    judge = MultiJudge(DIMS, "Judge it.", repeats=2)
    result = await judge.score(models, "[0] user: hi\n[1] agent: hello", {0, 1}, key="s1")
    assert result.means() == {"clarity": 4.0, "pace": 4.0}  # (3 + 5) / 2
    events = result.events()
    assert len(events) == 2 * 2 * 2
    assert judge_means_from_events(events) == result.means()


async def test_cited_turns_that_do_not_exist_are_asked_again_then_dropped() -> None:
    api = ScriptedAPI([_verdict(3, [0, 7]), _verdict(3, [9, 1])])
    judge = MultiJudge(DIMS, "Judge it.", judges=["judge"], citation_retries=1)
    result = await judge.score(ModelRoles({"judge": api}), "[0] user: hi\n[1] agent: ok", {0, 1})
    assert len(api.requests) == 2
    assert "Turns [7] do not exist" in api.requests[1].messages[-1].content
    score = result.scores[0]
    assert score.evidence_turns == [1]
    assert score.invalid_evidence == [9]


async def test_a_judge_that_fails_becomes_an_error_and_the_others_still_count() -> None:
    def broken(_request: Request) -> str:
        raise ModelError("server down")

    models = ModelRoles(
        {"judge": ScriptedAPI([_verdict(4, [])]), "judge2": ScriptedAPI(responder=broken)}
    )
    result = await MultiJudge(DIMS, "Judge it.").score(models, "[0] user: hi", {0})
    assert result.means() == {"clarity": 4.0, "pace": 4.0}
    assert [(e.where, e.error_type) for e in result.errors] == [("judge2", "ModelError")]


async def test_out_of_range_scores_are_rejected_by_the_schema() -> None:
    api = ScriptedAPI([_verdict(9, [])] * 3)
    result = await MultiJudge(DIMS, "x", judges=["judge"]).score(
        ModelRoles({"judge": api}), "[0] u", {0}
    )
    assert result.scores == []
    assert [(e.where, e.error_type) for e in result.errors] == [("judge", "OutputValidationError")]
