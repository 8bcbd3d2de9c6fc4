"""Reflection in MSC's form: one free-text notes document, rewritten from the whole
conversation, given whole at session start, its relevant part picked before each reply."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from rapport.llm import Message, ModelRoles, Request, ScriptedAPI
from rapport.log import SessionInfo, SessionRecord, Turn, UserSpec
from rapport.memory import MscNotesPromptsError, create_memory, load_msc_notes_prompts

LONG = "Wants bullet points. " * 200  # far past the list form's 160-character notes


def memory_reply(request: Request) -> str:
    title = str((request.json_schema or {}).get("title", ""))
    if title == "NotesSelection":
        return json.dumps({"reasoning": "r", "relevant_notes": "Use bullet points."})
    return json.dumps({"reasoning": "They asked for bullets.", "notes": LONG})


def record() -> SessionRecord:
    turns = [
        Turn(index=0, speaker="agent", text="How can I help you?"),
        Turn(index=1, speaker="user", text="A speed question."),
        Turn(index=2, speaker="agent", text="It is 60 km/h."),
        Turn(index=3, speaker="user", text="Please use bullet points."),
    ]
    return SessionRecord(
        run_id="r", condition="reflection", user_id="u", spec_id="s", index=0, turns=turns
    )


async def test_notes_are_one_uncapped_document_read_whole_and_picked_per_turn() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc")
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    update = api.requests[0]
    shown = update.messages[0].content
    assert "Assistant: How can I help you?" in shown and "User: Please use bullet points." in shown
    assert update.config.temperature == 1.0 and update.config.max_tokens == 2048
    [note] = memory.snapshot(user).items
    assert note.text == LONG.strip()
    context = await memory.context(user, SessionInfo(index=1, benchmark="collab"))
    assert LONG.strip() in context
    recalled = await memory.recall(user, [Message(role="assistant", content="How can I help you?")])
    assert "Use bullet points." in recalled
    assert str(api.requests[-1].json_schema.get("title")) == "NotesSelection"  # type: ignore[union-attr]


async def test_the_pick_runs_on_empty_notes_as_msc_s_code_unless_told_not_to() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc")
    user = UserSpec(id="u", persona="p", preferences=[])
    assert await memory.context(user, SessionInfo(index=0, benchmark="collab")) == ""
    recalled = await memory.recall(user, [Message(role="user", content="hi")])
    assert "Use bullet points." in recalled and len(api.requests) == 1
    quiet = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    roles = ModelRoles({"memory": quiet})
    memory = create_memory("reflection", roles, form="msc", pick_before_notes=False)
    assert await memory.recall(user, [Message(role="user", content="hi")]) == ""
    assert not quiet.requests


CHECKOUT = Path(__file__).parents[1] / "envs" / "collab" / "data" / "msc_checkout"


def msc_reply(request: Request) -> str:
    if request.json_schema:
        return json.dumps({"reasoning": "r", "relevant_notes": "Bullets, always."})
    return '{"user_preferences_reasoning": "r", "agent_notes": "Bullets."}'


async def test_msc_s_own_prompts_update_and_pick_the_notes_as_its_code_does() -> None:
    api = ScriptedAPI(responder=msc_reply, name="scripted/memory")
    roles = ModelRoles({"memory": api})
    memory = create_memory("reflection", roles, form="msc", prompts_from=str(CHECKOUT))
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    update = api.requests[0]
    assert update.json_schema is None  # free text: the whole reply becomes the notes
    assert update.messages[0].content.startswith("Rewrite your notes on this person")
    assert "The chat:\nAssistant: How can I help you?\nUser: A speed question." in (
        update.messages[0].content
    )
    [note] = memory.snapshot(user).items
    assert note.text == '{"user_preferences_reasoning": "r", "agent_notes": "Bullets."}'
    assert await memory.context(user, SessionInfo(index=1, benchmark="collab")) == note.text
    recalled = await memory.recall(user, [Message(role="assistant", content="How can I help you?")])
    assert recalled == "Notes {picked} for this reply:\nBullets, always."
    pick = api.requests[-1].messages[0].content
    assert pick.startswith("Pick the notes") and f"All notes:\n{note.text}" in pick


def test_msc_notes_prompts_take_the_msc_form() -> None:
    roles = ModelRoles({"memory": ScriptedAPI(responder=msc_reply)})
    with pytest.raises(ValidationError, match="it takes form msc"):
        create_memory("reflection", roles, prompts_from=str(CHECKOUT))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda root: (root / AGENT).unlink(), "no collaborativeagents/agents/"),
        (lambda root: _swap(root / PROMPTS, "{complete_agent_notes}", "{notes}"), "{notes}"),
        (lambda root: _swap(root / PROMPTS, "update_agent_notes_prompt", "x"), "has no 'update"),
        (lambda root: _swap(root / AGENT, "scaffolded_notes", "picked"), "no f-string"),
        (lambda root: _swap(root / PROMPTS, '"""Pick', '"""{'), "not a valid template"),
    ],
)
def test_a_broken_checkout_is_one_line(
    tmp_path: Path, edit: Callable[[Path], object], message: str
) -> None:
    root = tmp_path / "msc"
    shutil.copytree(CHECKOUT, root)
    edit(root)
    with pytest.raises(MscNotesPromptsError, match=re.escape(message)) as info:
        load_msc_notes_prompts(root)
    assert "\n" not in str(info.value)


PROMPTS = Path("collaborativeagents/prompts.py")
AGENT = Path("collaborativeagents/agents/collaborator_agent.py")


def _swap(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


async def test_with_msc_s_prompts_the_line_comes_even_when_nothing_is_picked() -> None:
    def nothing(request: Request) -> str:
        return json.dumps({"reasoning": "r", "relevant_notes": ""})

    api = ScriptedAPI(responder=nothing, name="scripted/memory")
    roles = ModelRoles({"memory": api})
    memory = create_memory("reflection", roles, form="msc", prompts_from=str(CHECKOUT))
    user = UserSpec(id="u", persona="p", preferences=[])
    recalled = await memory.recall(user, [Message(role="assistant", content="Hi?")])
    assert recalled == "Notes {picked} for this reply:\n"
    assert "All notes:\n\n" in api.requests[0].messages[0].content


async def test_packaged_prompts_show_the_model_single_braces() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc")
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    await memory.recall(user, [Message(role="assistant", content="How can I help you?")])
    for request in api.requests:
        shown = request.messages[0].content
        assert '{"reasoning"' in shown and "{{" not in shown and "}}" not in shown


async def test_msc_s_json_path_keeps_agent_notes_asking_again_until_it_parses() -> None:
    replies = iter(["not json at all", '{"agent_notes": "no reasoning key"}'])

    def reply(request: Request) -> str:
        if request.json_schema:
            return json.dumps({"reasoning": "r", "relevant_notes": "x"})
        return next(replies, '{"user_preferences_reasoning": "r", "agent_notes": " Bullets. "}')

    api = ScriptedAPI(responder=reply, name="scripted/memory")
    options = {"form": "msc", "prompts_from": str(CHECKOUT), "notes_format": "json"}
    memory = create_memory("reflection", ModelRoles({"memory": api}), **options)
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    assert len(api.requests) == 3
    assert len({r.config.seed for r in api.requests}) == 3  # each try a fresh sample
    assert [i.text for i in memory.snapshot(user).items] == [" Bullets. "]  # as written


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"form": "msc", "layout": "tags"}, "layout applies to form list"),
        ({"form": "msc", "max_notes": 5, "retries": 2}, "max_notes, retries applies to form list"),
        ({"form": "list", "pick_before_notes": False}, "pick_before_notes applies to form msc"),
        ({"form": "msc", "notes_format": "json"}, "notes_format json is MSC's JSON path"),
    ],
)
def test_an_option_the_form_does_not_read_is_refused(
    options: dict[str, object], refused: str
) -> None:
    roles = ModelRoles({"memory": ScriptedAPI(responder=memory_reply)})
    with pytest.raises(ValidationError, match=re.escape(refused)):
        create_memory("reflection", roles, **options)


async def test_fresh_notes_start_every_session_and_reflection_empty() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc", fresh_notes=True)
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    assert memory.snapshot(user).items  # the session's reflection is kept
    assert await memory.context(user, SessionInfo(index=1, benchmark="collab")) == ""
    await memory.learn(user, record())
    second_update = [r for r in api.requests if r.json_schema and "notes" in str(r.json_schema)]
    assert LONG.strip()[:40] not in second_update[-1].messages[0].content
