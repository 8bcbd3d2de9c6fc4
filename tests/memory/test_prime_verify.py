"""PRIME's lesson checks: what code rejects, the distiller's rewrite of what failed, the
audit trail of dropped lessons, and near-duplicates merged rather than repeated."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.envs.gyms import GymOutcome, make_gym
from rapport.llm import ModelRoles, Request, ScriptedAPI, ToolCall
from rapport.log import Provenance, RewardEvent, SessionRecord, Turn
from rapport.memory.prime import (
    Experience,
    ExperienceLibrary,
    TurnFacts,
    babbles,
    distill,
    grounded,
    lesson_problems,
    same_lesson,
)
from rapport.memory.prime._distill import Exploration
from rapport.memory.prime._verify import whole_sentences

FUNCTION = TurnFacts(
    turn=2,
    talks=False,
    moves=["[action] f(1, 0, 0, 0)", "[answer] rule: 2*a + b - 3; value: 5"],
    secrets=["polar bear"],
    replies=["Unrecognized move. Reply with exactly one move per message, on a line"],
)


def test_each_check_rejects_what_it_names_and_passes_a_plain_lesson() -> None:
    assert lesson_problems("Query f with one input set to 1 and the rest 0 first.", FUNCTION) == []
    assert lesson_problems("Do not answer before asking or querying anything.", FUNCTION) == []
    cases = {
        "Query more.": "too short",
        "Ask whether it is an object first. If it is not, ask whether it is a place,": "cut off",
        "Query f(1, 0, 0, 0), then f(0, 1, 0, 0), then " + "vary c and d " * 12: "is cut off",
        "Pregunta si es un animal o una planta antes de adivinar.": "",  # ASCII: Spanish passes
        "اسأل إذا كان حيوانا قبل أن تخمن الجواب": "not written in English",
        "Ask whether it is a plant or a plant or a plant or a plant.": "repeats itself",
        "Guess polar bears only after three questions.": "names this episode's answer",
        "Reply with exactly one move per message, on a line.": "copies the environment's reply",
        "Do not answer in the warning zone; query first.": "speaks of the scoring",
        "Do not query f(1, 0, 0, 0) again; vary d.": "says 'again', but the move at turn 2",
        "Ask whether the rule is linear before you answer.": "nobody answers questions here",
        "Query f(1, 0, 0, 0) before asking whether it is linear.": "nobody answers questions",
    }
    for lesson, expected in cases.items():
        found = lesson_problems(lesson, FUNCTION)
        if expected:
            assert any(expected in p for p in found), (lesson, found)
        else:
            assert not any("English" in p for p in found), (lesson, found)
    talking = TurnFacts(turn=2, repeated=True)
    assert lesson_problems("Do not ask whether it is an animal again; ask its size.", talking) == []
    assert "`[action] f(1, 0, 0, 0)`" in lesson_problems("Ask if the rule is linear.", FUNCTION)[0]


def test_near_duplicates_match_but_swapped_or_different_lessons_do_not() -> None:
    a = "Do not answer before querying anything; instead query f(1, 0, 0, 0) first."
    assert same_lesson(a, "Do not answer before querying anything, instead query f(1,0,0,0) first")
    swapped = (
        "Ask whether it is a living thing before asking whether it is an animal.",
        "Ask whether it is an animal before asking whether it is a living thing.",
    )
    assert not same_lesson(*swapped)
    assert not same_lesson(a, "Query each input alone before answering.")
    assert babbles("ask whether it is a plant or a vehicle or a plant or a vehicle or a plant")
    assert not babbles("Ask whether it is alive, then whether it is bigger than a dog.")
    assert not babbles("Do not answer until f(1, 1, 1, 1) is 7; query f(1, 1, 1, 1) first.")
    recurs = "Ask whether it is an insect before asking whether it is a reptile; instead, ask"
    assert not babbles(recurs + " whether it is a bird first.")
    assert not babbles(
        "Do not ask whether it's a living thing again; ask whether it's a living tool."
    )
    assert babbles(
        "Ask whether the answer is yes or no; instead, ask whether the answer is yes or no"
    )


def _record(moves: list[tuple[str, str]], reward: float, **outcome: Any) -> SessionRecord:
    record = SessionRecord(
        run_id="r", condition="prime", user_id="u", index=0, spec_id="function:train:1"
    )
    record.turns.append(Turn(index=0, speaker="user", text="f(a, b, c, d) is hidden. Test: 7"))
    for i, (move, reply) in enumerate(moves):
        record.turns += [
            Turn(index=2 * i + 1, speaker="agent", text=move),
            Turn(index=2 * i + 2, speaker="user", text=reply),
        ]
        record.events.append(RewardEvent(turn=2 * i + 1, reward=0.0, move=move))
    fields: dict[str, Any] = {
        "env": "function",
        "horizon": 4,
        "trajectory_reward": reward,
        "rules": "Query with `[action] f(1, 2, 3, 4)`.",
        "moves": FUNCTION.moves,
        "talks": False,
        "secrets": ["a + 1"],
    }
    record.outcome = GymOutcome(**(fields | outcome))
    return record


MOVES = [
    ("[action] f(1, 0, 0, 0)", "f(1, 0, 0, 0) = 2"),
    ("I think it is linear", "Unrecognized move."),
    ("[answer] rule: a; value: 1", "Scored: rule wrong, value wrong."),
]


def _distiller(first: str, second: str = "") -> ScriptedAPI:
    def reply(request: Request) -> str | ToolCall:
        fixing = request.messages[-1].content.startswith("This lesson cannot be kept")
        return json.dumps({"lesson": second if fixing else first})

    return ScriptedAPI(responder=reply)


async def test_a_failed_lesson_goes_back_with_why_and_its_rewrite_is_checked_again() -> None:
    good = "Query f(0, 1, 0, 0) next to see what b does."
    api = _distiller("Ask whether the rule is linear.", good)
    record = _record(MOVES, 0.0)
    memory = ModelRoles({"all": api}).get("memory")
    out = await distill(memory, record, library_id="e1", iteration=1)
    assert len(api.requests) == 2 and out.refined == 1
    prompt, fix = api.requests[0].messages[0].content, api.requests[1].messages
    assert "Its rules, as the agent read them: Query with `[action] f(1, 2, 3, 4)`." in prompt
    assert '"Ask whether' not in prompt, "no example lesson asks where nobody answers"
    assert [m.role for m in fix] == ["user", "assistant", "user"]
    assert '"Ask whether the rule is linear.": it tells the agent to ask' in fix[2].content
    assert [e.lesson for e in out.experiences] == [good] and not out.dropped

    names = _distiller("Answer a + 1 early.", "Answer a + 1 even earlier, with care.")
    dropped = await distill(
        ModelRoles({"all": names}).get("memory"), record, library_id="e1", iteration=1
    )
    assert not dropped.experiences and dropped.dropped[0].startswith('"Answer a + 1 even earlier')
    assert "names" in dropped.dropped[0]

    no_refine = await distill(
        ModelRoles({"all": _distiller("Query b.")}).get("memory"),
        record,
        library_id="e1",
        iteration=1,
        refine=False,
    )
    assert not no_refine.experiences and no_refine.refined == 0
    assert [d.split(" (")[1] for d in no_refine.dropped] == ["is too short to act on)"]


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        # Stopped by the length limit in its second sentence: the first is kept.
        (
            "Always ask a question before giving an answer. This will help you gather more "
            "information and make a more informed decision about what the rule could be and "
            "which inputs to query next so th",
            "Always ask a question before giving an answer.",
        ),
        # No whole sentence before the cut, or a whole one too short to act on: as written.
        (
            "Remember to always query the environment before answering, especially when "
            "you're unsure about the inputs or the function's behaviour and what it does to",
            None,
        ),
        ("Query b. Then query a, c and d one at a time to see what each of them does,", None),
        ("Query f(0, 1, 0, 0) next to see what b does.", None),
    ],
)
def test_a_lesson_cut_by_the_length_limit_keeps_its_whole_sentences(
    written: str, kept: str | None
) -> None:
    assert whole_sentences(written) == (kept or written)


async def test_the_distiller_keeps_the_whole_sentences_of_a_cut_lesson() -> None:
    cut = (
        "Query f(0, 1, 0, 0) next to see what b does. Then vary one input at a time and "
        "compare each reply with the one before, so that every coefficient of the rule is "
        "pinned down before you give any"
    )
    api = _distiller(cut)
    out = await distill(
        ModelRoles({"all": api}).get("memory"), _record(MOVES, 0.0), library_id="e1", iteration=1
    )
    assert [e.lesson for e in out.experiences] == ["Query f(0, 1, 0, 0) next to see what b does."]
    assert out.refined == 0 and len(api.requests) == 1


def test_an_unreadable_move_is_marked_in_the_experience() -> None:
    steps = [
        Exploration(0, "", "[action] f(1, 0, 0, 0)", 0.0, "f(1, 0, 0, 0) = 2", 1),
        Exploration(1, "", "I think it is linear", 0.0, "Unrecognized move.", 3),
    ]
    assert grounded(steps, 0, 0.0)[1] == "[action] f(1, 0, 0, 0)"
    assert grounded(steps, 1, 0.0)[1] == "(not a valid move) I think it is linear"


def test_the_library_records_merges_and_lists_the_lessons_it_dropped() -> None:
    lib = ExperienceLibrary()

    def exp(i: int, lesson: str, zone: str = "warning") -> Experience:
        return Experience(
            id=f"exp-{i}",
            situation="s",
            action="a",
            outcome="o",
            lesson=lesson,
            stage="exploration",
            zone=zone,  # type: ignore[arg-type]
            provenance=[Provenance(session=i, source=f"prime/u/ep{i}")],
        )

    lib.add(exp(1, "Query each input alone before answering."))
    lib.commit(added=["exp-1"], removed=[], note="distilled ep1", dropped=['"x" (too short)'])
    assert (
        lib.same_as(exp(2, "Query each input alone, before answering!")) is lib.experiences["exp-1"]
    )
    assert lib.same_as(exp(3, "Query each input alone before answering.", "golden")) is None
    lib.commit(added=[], removed=[], note="nothing")
    assert lib.version == 2, "every update is a version, whatever it changed"
    lib.commit(added=[], removed=[], note="distilled ep2", dropped=['"y" (too short)'])
    assert lib.version == 3, "a distillation whose every lesson was dropped is recorded"
    md = lib.to_markdown()
    assert "+1 -0, 1 dropped" in md and '- v1: "x" (too short)' in md
    assert '- v3: "y" (too short)' in md
    assert md.index("## Lessons not kept") > md.index("## History")


def test_only_gyms_where_someone_answers_take_questions() -> None:
    talks = {name: make_gym(name).talks for name in ("function", "search", "telepathy", "turtle")}
    assert talks == {"function": False, "search": False, "telepathy": True, "turtle": True}


@pytest.mark.real_model
async def test_the_embedded_model_distils_a_function_episode_through_the_checks() -> None:
    record = _record(
        [
            ("[answer] rule: a + b; value: 3", "Scored: rule wrong, value wrong."),
            ("[answer] rule: a + b; value: 3", "Scored: rule wrong, value wrong."),
        ],
        0.0,
        horizon=16,
    )
    model = ModelRoles({"all": "llamacpp/qwen2.5-coder-1.5b"}).get("memory")
    out = await distill(model, record, library_id="e1", iteration=1, k=2)
    assert len(out.experiences) + len(out.dropped) == 1, "the lesson is kept or dropped"
    for e in out.experiences:
        assert e.action == "[answer] rule: a + b; value: 3", "the log writes the action"
        assert (e.zone, e.stage) == ("warning", "exploration") and e.lesson.strip()
    assert all(d.startswith('"') and d.endswith(")") for d in out.dropped)


async def test_an_episode_solved_at_its_last_allowed_turn_is_distilled_as_golden() -> None:
    moves = [(f"[action] f({i}, 0, 0, 0)", f"f({i}, 0, 0, 0) = {i + 1}") for i in range(15)]
    moves.append(("[answer] rule: a + 1; value: 8", "Scored: rule correct, value correct."))
    record = _record(moves, 1.0, horizon=16, success=True)
    record.events[-1] = RewardEvent(turn=31, reward=1.0, move=moves[-1][0])
    api = _distiller("Query each input alone before giving the rule.")
    memory = ModelRoles({"all": api}).get("memory")
    golden = await distill(memory, record, library_id="e1", iteration=1)
    assert [(e.zone, e.stage) for e in golden.experiences] == [("golden", "completion")]
    assert "reward 1.00" in golden.experiences[0].events[0].note
    discounted = await distill(memory, record, library_id="e2", iteration=1, reward_of="R2G")
    assert [e.zone for e in discounted.experiences] == ["warning"], "0.8**15 of the reward"
