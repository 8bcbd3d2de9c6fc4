"""PRefine's generate -> verify -> refine loop on the scripted model."""

from __future__ import annotations

import json

from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import MemoryHealth, SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory
from rapport.memory.prefine import PRefineMemory

OK = {"support": True, "abstraction": True, "actionable": True, "temporal": True}


def _record(index: int = 0) -> SessionRecord:
    return SessionRecord(
        condition="c",
        user_id="u",
        index=index,
        spec_id="s",
        turns=[Turn(index=0, speaker="user", text="Cheapest option please, just me.")],
    )


class Script:
    """Generator and verifier replies by round; remembers every generator prompt."""

    def __init__(self, generations: list[list[str]], verdicts: list[list[dict]]) -> None:
        self.generations, self.verdicts = generations, verdicts
        self.generator_prompts: list[str] = []

    def __call__(self, request: Request) -> str:
        title = request.json_schema["title"] if request.json_schema else ""
        if title == "HypothesisSet":
            self.generator_prompts.append(request.messages[-1].content)
            texts = self.generations[min(len(self.generator_prompts), len(self.generations)) - 1]
            return json.dumps(
                {"hypotheses": [{"text": t, "level": "cross-domain", "support": 2} for t in texts]}
            )
        verdicts = self.verdicts[min(len(self.generator_prompts), len(self.verdicts)) - 1]
        return json.dumps({"verdicts": [{"index": i, **v} for i, v in enumerate(verdicts)]})


async def test_a_rejected_hypothesis_returns_with_the_verifiers_feedback() -> None:
    script = Script(
        generations=[["keeps costs low", "booked Blue Fern on May 2"], ["travels alone"]],
        verdicts=[[OK, {**OK, "abstraction": False, "feedback": "restates one booking"}], [OK]],
    )
    memory = create_memory("prefine", ModelRoles({"all": ScriptedAPI(responder=script)}))
    user = UserRef(id="u")
    await memory.learn(user, _record())
    assert len(script.generator_prompts) == 2
    assert "feedback" not in script.generator_prompts[0].lower()
    second = script.generator_prompts[1]
    assert "booked Blue Fern on May 2" in second and "restates one booking" in second
    assert "fails abstraction" in second
    texts = [i.text for i in memory.snapshot(user).items]
    assert texts == ["keeps costs low", "travels alone"]
    rounds = memory.snapshot(user).data["last_rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert rounds[0]["rejected"] == {1: "fails abstraction: restates one booking"}


async def test_the_loop_stops_after_three_rounds_and_keeps_the_prior_memory() -> None:
    accept = Script(generations=[["keeps costs low"]], verdicts=[[OK]])
    roles = ModelRoles({"all": ScriptedAPI(responder=accept)})
    memory = PRefineMemory(roles)
    user = UserRef(id="u")
    await memory.learn(user, _record(0))
    reject = Script(
        generations=[["likes Tuesdays"]],
        verdicts=[[{**OK, "support": False, "feedback": "seen once"}]],
    )
    memory.models = ModelRoles({"all": ScriptedAPI(responder=reject)})
    await memory.learn(user, _record(1))
    assert len(reject.generator_prompts) == 3
    assert [i.text for i in memory.snapshot(user).items] == ["keeps costs low"]
    assert "keeps costs low" in reject.generator_prompts[0]  # the prior memory is shown


async def test_the_verifier_must_give_one_verdict_per_candidate() -> None:
    schemas: list[dict] = []
    script = Script(generations=[["keeps costs low", "travels alone"]], verdicts=[[OK], []])

    def responder(request: Request) -> str:
        if request.json_schema and request.json_schema["title"] == "VerdictSet":
            schemas.append(request.json_schema)
        return script(request)

    memory = PRefineMemory(ModelRoles({"all": ScriptedAPI(responder=responder)}), max_rounds=1)
    user = UserRef(id="u")
    await memory.learn(user, _record())
    items = schemas[0]["properties"]["verdicts"]
    assert (items["minItems"], items["maxItems"]) == (2, 2)
    # One verdict for two candidates is not a valid reply: retried, then a failed update.
    assert memory.snapshot(user).items == []
    assert memory.health(user).failures == 1


async def test_verdicts_match_by_index_or_else_by_order() -> None:
    def verdicts(indices: list[int], passes: list[bool]) -> str:
        return json.dumps(
            {
                "verdicts": [
                    {**OK, "index": i, "support": p} for i, p in zip(indices, passes, strict=True)
                ]
            }
        )

    for indices, stored in (([1, 0], ["travels alone"]), ([0, 0], ["keeps costs low"])):
        # The verdict with index 1 passes; the one with index 0 fails support.
        reply = verdicts(indices, [True, False])

        def responder(request: Request, reply: str = reply) -> str:
            if request.json_schema and request.json_schema["title"] == "HypothesisSet":
                return json.dumps(
                    {"hypotheses": [{"text": "keeps costs low"}, {"text": "travels alone"}]}
                )
            return reply

        memory = PRefineMemory(ModelRoles({"all": ScriptedAPI(responder=responder)}), max_rounds=1)
        user = UserRef(id="u")
        await memory.learn(user, _record())
        assert [i.text for i in memory.snapshot(user).items] == stored


async def test_a_candidate_copying_the_instructions_never_reaches_the_verifier() -> None:
    echoes = [
        "The user reuses the same value for the same kind of option (one service)",
        "The session that just ended, with the calls that were executed: GetHeating",
        "Keep each under 8 words.",
    ]
    script = Script(
        generations=[[*echoes, "keeps costs low"], ["travels alone"]], verdicts=[[OK], [OK]]
    )
    verifier_prompts: list[str] = []

    def responder(request: Request) -> str:
        if request.json_schema and request.json_schema["title"] == "VerdictSet":
            verifier_prompts.append(request.messages[-1].content)
        return script(request)

    memory = PRefineMemory(ModelRoles({"all": ScriptedAPI(responder=responder)}))
    user = UserRef(id="u")
    await memory.learn(user, _record())
    assert all(e not in verifier_prompts[0] for e in echoes)
    assert "0. keeps costs low" in verifier_prompts[0]
    assert all(e in script.generator_prompts[1] for e in echoes)
    assert "instructions' wording" in script.generator_prompts[1]
    assert [i.text for i in memory.snapshot(user).items] == ["keeps costs low", "travels alone"]
    rounds = memory.snapshot(user).data["last_rounds"]
    assert set(rounds[0]["rejected"]) == {0, 1, 2} and rounds[0]["accepted"] == [3]


def test_what_counts_as_copying_the_instructions() -> None:
    from rapport.memory.prefine._loop import Hypothesis, echoes_prompt

    copies = [
        "the user reuses the same value for the same kind of option",
        "Current hypotheses (with how many sessions support each)",
        "Return the complete updated list",
        "...",
    ]
    own = [
        "keeps costs low across services",  # the prompt's quoted example is not an instruction
        "usually travels with a family of four",
        "prefers economy seats on every flight",
        "books a table for two",
    ]
    assert [echoes_prompt(Hypothesis(text=t)) for t in copies] == [True] * len(copies)
    assert [echoes_prompt(Hypothesis(text=t)) for t in own] == [False] * len(own)


def test_copied_level_and_support_tags_are_cut_from_a_hypothesis() -> None:
    from rapport.memory.prefine._loop import strip_copied_tags

    cases = {
        # whole tags and tags cut off at the length limit, as a 0.5B wrote them
        "travels with a family of four. [value; support 1] [domain; support 1": (
            "travels with a family of four."
        ),
        "sees a therapist. [value; support 1] [domain; support 1] [domain; not]": (
            "sees a therapist."
        ),
        "keeps costs low across [value; support 3] [value; 4": "keeps costs low across",
        "prefers economy class [cross": "prefers economy class",
        "likes [cross-domain; support 2] quiet rooms   ": "likes quiet rooms",
        "[value; support 1]": "",
        # brackets that are not our tags stay
        "books tables at [Main St] places": "books tables at [Main St] places",
        "prefers [value] brands for one service": "prefers [value] brands for one service",
    }
    assert {t: strip_copied_tags(t) for t in cases} == cases


async def test_candidates_that_differ_only_by_copied_tags_are_one_candidate() -> None:
    script = Script(
        generations=[
            [
                "keeps costs low [value; support 1]",
                "keeps costs low [value; support 2] [domain; support 1",
                "[domain; support 1]",
                "travels alone",
            ]
        ],
        verdicts=[[OK, OK]],
    )
    memory = PRefineMemory(ModelRoles({"all": ScriptedAPI(responder=script)}))
    user = UserRef(id="u")
    await memory.learn(user, _record())
    assert [i.text for i in memory.snapshot(user).items] == ["keeps costs low", "travels alone"]
    rounds = memory.snapshot(user).data["last_rounds"]
    assert [c["text"] for c in rounds[0]["candidates"]] == ["keeps costs low", "travels alone"]


async def test_context_is_one_compact_line_within_budget() -> None:
    script = Script(
        generations=[["keeps costs low", "travels alone", "likes mornings"]],
        verdicts=[[OK, OK, OK]],
    )
    memory = create_memory(
        "prefine", ModelRoles({"all": ScriptedAPI(responder=script)}), max_chars=50
    )
    user = UserRef(id="u")
    await memory.learn(user, _record())
    text = await memory.context(user, SessionInfo(index=1, benchmark="mpt"))
    assert text == "Preferences: keeps costs low; travels alone."
    assert len(text) <= 50


async def test_learning_calls_failures_and_empty_results_are_counted() -> None:
    script = Script(generations=[["keeps costs low"]], verdicts=[[{**OK, "support": False}]])
    memory = PRefineMemory(ModelRoles({"all": ScriptedAPI(responder=script)}), max_rounds=1)
    user = UserRef(id="u")
    await memory.learn(user, _record(0))  # nothing accepted
    memory.models = ModelRoles({"all": ScriptedAPI(responder=lambda r: "not json")})
    await memory.learn(user, _record(1))  # the output stays invalid
    assert memory.health(user) == MemoryHealth(calls=2, failures=1, empty=1)
