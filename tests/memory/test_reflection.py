import json

import pytest

from rapport.envs.collab import EnforcementEvent
from rapport.llm import Message, ModelRoles, OutputValidationError, Request, ScriptedAPI
from rapport.log import SessionRecord, Turn
from rapport.memory import (
    ReflectionMemory,
    ReflectionOutput,
    SessionInfo,
    UserRef,
    create_memory,
    format_transcript,
    parse_reflection,
    reflection_messages,
    reflection_schema,
)

USER = UserRef(id="u1", truth="hidden")
SESSION = SessionInfo(index=1, benchmark="collab")


def reflection(*notes: str, reasoning: str = "The user asked for bullets.") -> str:
    body = "\n".join(f"- {n}" for n in notes)
    return f"<reasoning>\n{reasoning}\n</reasoning>\n<notes>\n{body}\n</notes>"


def session(index: int = 0, pushback: str = "Please use bullet points.") -> SessionRecord:
    return SessionRecord(
        condition="reflection",
        user_id="u1",
        index=index,
        spec_id=f"p{index}",
        turns=[
            Turn(index=0, speaker="system", text="SYSTEM PROMPT"),
            Turn(index=1, speaker="user", text="Solve 2x + 3 = 11."),
            Turn(index=2, speaker="agent", text="Subtract 3, then divide: x = 4."),
            Turn(index=3, speaker="user", text=pushback),
            Turn(index=4, speaker="agent", text="- Subtract 3\n- Divide by 2"),
        ],
        events=[EnforcementEvent(turn=3, preference_id="bullet_points")],
    )


def memory_with(api: ScriptedAPI, **options: object) -> ReflectionMemory:
    """A reflection memory; these tests script the tagged layout unless they say otherwise."""
    options.setdefault("layout", "tags")
    memory = create_memory("reflection", ModelRoles({"all": api}), **options)
    assert isinstance(memory, ReflectionMemory)
    return memory


def test_transcript_has_no_pushback_marks_by_default() -> None:
    text = format_transcript(session())
    assert "PUSHBACK" not in text and "objected" not in text
    assert "[turn 3] USER: Please use bullet points." in text
    assert "PUSHBACK" not in reflection_messages(text, [])[1].content


def test_transcript_marks_pushback_and_skips_system() -> None:
    text = format_transcript(session(), pushback=True)
    assert "SYSTEM PROMPT" not in text
    assert "[turn 3] USER (PUSHBACK): Please use bullet points." in text
    assert "[turn 2] ASSISTANT: Subtract 3" in text
    assert "bullet_points" not in text  # the preference id is ground truth: never shown


def test_reflection_messages_carry_prior_notes_and_transcript() -> None:
    messages = reflection_messages("[turn 1] USER: hi {transcript}", ["Use bullets."])
    assert [m.role for m in messages] == ["system", "user"]
    assert "- Use bullets." in messages[1].content
    assert "[turn 1] USER: hi {transcript}" in messages[1].content
    assert "<notes>" in messages[0].content


def test_parse_reflection() -> None:
    parsed = parse_reflection(
        "<reasoning>why</reasoning>\n<notes>\n- Use bullets. [turns 3, 5]\n* End with TL;DR\n"
        "- use  BULLETS.\n</notes>"
    )
    assert parsed is not None
    assert parsed.reasoning == "why"
    assert parsed.notes == ["Use bullets.", "End with TL;DR"]
    assert parsed.note_turns == [[3, 5], []]
    assert parse_reflection("<reasoning>x</reasoning><notes>\n</notes>").notes == []  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    [
        "- Use bullets.",
        "<notes>\n- a\n</notes>",
        "<reasoning>x</reasoning>\n<notes>\nUse bullets\n</notes>",
        "<notes>\n- a\n</notes><reasoning>x</reasoning>",
    ],
)
def test_parse_reflection_rejects_bad_layouts(text: str) -> None:
    assert parse_reflection(text) is None


async def test_learn_rewrites_notes_and_context_shows_them() -> None:
    api = ScriptedAPI(
        [
            reflection("Answer in prose paragraphs.", "Give a confidence estimate."),
            reflection("Use bullet points, not prose. [turn 3]", "Give a confidence estimate."),
        ]
    )
    memory = memory_with(api)
    assert await memory.context(USER, SESSION) == ""
    await memory.learn(USER, session(0))
    await memory.learn(USER, session(1))
    assert memory.notes(USER) == ["Use bullet points, not prose.", "Give a confidence estimate."]
    context = await memory.context(USER, SESSION)
    assert "Use bullet points, not prose." in context
    assert "prose paragraphs" not in context
    # The second reflection saw the first session's notes.
    assert "- Answer in prose paragraphs." in api.requests[1].messages[1].content
    items = {i.text: i for i in memory.snapshot(USER).items}
    assert items["Use bullet points, not prose."].provenance[0].session == 1
    assert items["Use bullet points, not prose."].provenance[0].turn == 3
    assert items["Give a confidence estimate."].provenance[0].session == 0  # unchanged: kept


async def test_recall_selects_the_relevant_notes() -> None:
    def responder(request: Request) -> str:
        if request.json_schema is None:
            return reflection("Use bullet points.", "Greet the user warmly.", "Add a TL;DR line.")
        assert "3. Add a TL;DR line." in request.messages[-1].content
        return json.dumps({"notes": [3, 1, 3]})

    memory = memory_with(ScriptedAPI(responder=responder))
    await memory.learn(USER, session())
    text = await memory.recall(USER, [Message(role="user", content="Solve x + 1 = 2")])
    assert "Use bullet points." in text and "Add a TL;DR line." in text
    assert "Greet" not in text


async def test_recall_out_of_range_index_is_retried() -> None:
    replies = iter([reflection("Use bullet points."), '{"notes": [7]}', '{"notes": [1]}'])
    memory = memory_with(ScriptedAPI(responder=lambda _r: next(replies)))
    await memory.learn(USER, session())
    assert "Use bullet points." in await memory.recall(USER, [])


async def test_recall_without_notes_makes_no_call() -> None:
    api = ScriptedAPI([])
    memory = memory_with(api)
    assert await memory.recall(USER, [Message(role="user", content="hi")]) == ""
    assert api.requests == []


async def test_invalid_reflection_is_retried_then_raises_keeping_old_notes() -> None:
    api = ScriptedAPI([reflection("Use bullet points."), "just notes", "still bad", "nope"])
    memory = memory_with(api, retries=2, structured_fallback=False)
    await memory.learn(USER, session(0))
    with pytest.raises(OutputValidationError, match="reflection"):
        await memory.learn(USER, session(1))
    assert memory.notes(USER) == ["Use bullet points."]
    assert len(api.requests) == 4
    retry = api.requests[2].messages
    assert retry[-2].content == "just notes"
    assert "missing a <reasoning>" in retry[-1].content


async def test_layout_misses_fall_back_to_structured_output() -> None:
    structured = json.dumps(
        {"reasoning": "They asked for bullets.", "notes": ["Use bullet points. [turns 3]", " "]}
    )
    api = ScriptedAPI(["just notes", "still no tags", structured])
    memory = memory_with(api)  # one free-text retry, then the structured ask
    await memory.learn(USER, session())
    assert memory.notes(USER) == ["Use bullet points."]
    assert memory.snapshot(USER).items[0].provenance[0].turn == 3
    assert len(api.requests) == 3
    assert api.requests[0].json_schema is None and api.requests[2].json_schema is not None
    assert api.requests[2].messages[:2] == api.requests[0].messages  # the original ask, then JSON
    assert "JSON" in api.requests[2].messages[-1].content


async def test_structured_fallback_failing_too_raises_and_keeps_notes() -> None:
    api = ScriptedAPI([reflection("Be blunt."), "no tags", "not json", "{}", '{"notes": 3}'])
    memory = memory_with(api, retries=0)
    await memory.learn(USER, session(0))
    with pytest.raises(OutputValidationError):
        await memory.learn(USER, session(1))
    assert memory.notes(USER) == ["Be blunt."]


async def test_single_words_and_notes_pasted_from_the_problem_are_dropped() -> None:
    record = session()
    record.turns[1].text = "A museum ticket costs 15 dollars and Lucia buys three of them today."
    pasted = "A museum ticket costs 15 dollars and Lucia buys three"
    quoted = "Please use bullet points."  # the pushback turn itself may be quoted
    api = ScriptedAPI([reflection("Nadia", pasted, quoted)])
    memory = memory_with(api)
    await memory.learn(USER, record)
    assert memory.notes(USER) == [quoted]


async def test_reflection_output_caps_lengths_in_the_schema() -> None:
    schema = ReflectionOutput.model_json_schema()
    assert schema["properties"]["reasoning"]["maxLength"] == 600
    assert schema["properties"]["notes"]["items"]["maxLength"] == 160
    capped = reflection_schema(4).model_json_schema()["properties"]["notes"]
    assert capped["maxItems"] == 4 and capped["items"]["maxLength"] == 160


async def test_json_layout_is_one_structured_call() -> None:
    structured = json.dumps(
        {"reasoning": "They pushed back on prose.", "notes": ["Use bullet points. [turn 3]"]}
    )
    api = ScriptedAPI([structured])
    memory = memory_with(api, layout="json")
    await memory.learn(USER, session())
    assert memory.notes(USER) == ["Use bullet points."]
    assert len(api.requests) == 1 and api.requests[0].json_schema is not None
    system = api.requests[0].messages[0].content
    assert '"notes"' in system and "<notes>" not in system


def test_default_layout_is_json_and_unknown_layout_is_refused() -> None:
    memory = create_memory("reflection", ModelRoles({"all": ScriptedAPI([])}))
    assert isinstance(memory, ReflectionMemory) and memory.layout == "json"
    with pytest.raises(ValueError, match="layout"):
        create_memory("reflection", ModelRoles({"all": ScriptedAPI([])}), layout="yaml")


def test_tags_prompt_asks_for_the_trained_layout() -> None:
    system = reflection_messages("[turn 1] USER: hi", [])[0].content
    assert "<reasoning>" in system and "<notes>" in system and "{layout}" not in system
    assert system.endswith("</notes>\n")


async def test_invalid_then_valid_reflection_succeeds() -> None:
    memory = memory_with(ScriptedAPI(["oops", reflection("Keep replies short.")]))
    await memory.learn(USER, session())
    assert memory.notes(USER) == ["Keep replies short."]


async def test_snapshot_restore_round_trip() -> None:
    memory = memory_with(ScriptedAPI([reflection("Use bullet points.", "Be blunt.")]))
    await memory.learn(USER, session())
    state = memory.snapshot(USER)
    fresh = memory_with(ScriptedAPI([]))
    fresh.restore(USER, state)
    assert fresh.notes(USER) == ["Use bullet points.", "Be blunt."]
    assert fresh.snapshot(USER) == state
    assert await fresh.context(USER, SESSION) == await memory.context(USER, SESSION)
    state.items.clear()  # the snapshot is a copy: changing it leaves the memory alone
    assert fresh.notes(USER) == ["Use bullet points.", "Be blunt."]


async def test_notes_are_capped() -> None:
    memory = memory_with(ScriptedAPI([reflection(*(f"note {i}" for i in range(10)))]), max_notes=4)
    await memory.learn(USER, session())
    assert len(memory.notes(USER)) == 4


async def test_empty_session_makes_no_call_and_keeps_notes() -> None:
    api = ScriptedAPI([reflection("Use bullet points.")])
    memory = memory_with(api)
    await memory.learn(USER, session(0))
    empty = SessionRecord(condition="reflection", user_id="u1", index=1, spec_id="p1")
    await memory.learn(USER, empty)
    assert memory.notes(USER) == ["Use bullet points."]
    assert len(api.requests) == 1


async def test_notes_copied_from_the_assistant_are_dropped() -> None:
    record = session()
    record.turns[2].text = "Sure, I'd be happy to help you with that. Subtract 3, then divide."
    copied = 'Start with: "Sure, I\'d be happy to help you with that."'
    api = ScriptedAPI([reflection("Use bullet points. [turn 3]", copied)])
    memory = memory_with(api)
    await memory.learn(USER, record)
    assert memory.notes(USER) == ["Use bullet points."]
    assert memory.snapshot(USER).items[0].provenance[0].turn == 3


@pytest.mark.real_model
async def test_embedded_model_learns_a_pushed_back_preference() -> None:
    memory = create_memory("reflection", ModelRoles({"all": "llamacpp/qwen2.5-coder-1.5b"}))
    assert isinstance(memory, ReflectionMemory)
    await memory.learn(USER, session())
    assert any("bullet" in note.lower() for note in memory.notes(USER))
    recalled = await memory.recall(USER, [Message(role="user", content="How do I solve 3x = 9?")])
    assert "bullet" in recalled.lower()
