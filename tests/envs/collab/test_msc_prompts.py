"""``prompts_from``: the msc session runs MultiSessionCollab's own prompts, read from a
checkout at run time. The checkout here is ours (``data/msc_checkout``: our own text in the
layout of MSC's ``prompts.py`` and ``datasets/__init__.py``)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rapport.envs import Condition, SessionSpec
from rapport.envs.collab import (
    OPENING,
    CollabBenchmark,
    CollabOptions,
    CollabTask,
    EnforcementEvent,
    MscPromptsError,
    MscPublishedTurn,
    PreferenceVerdictEvent,
    Problem,
    Protocol,
    load_msc_prompts,
    packaged_prompts,
    prompts_table,
    protocol_of,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles, ScriptedAPI
from rapport.log import StopEvent, StopReason
from rapport.memory import create_memory

CHECKOUT = Path(__file__).parent / "data" / "msc_checkout"
PROMPTS = CHECKOUT / "collaborativeagents" / "prompts.py"
END = "<<CHAT OVER>>"
PREFS = ("bullet_points", "blunt", "stepwise_derivation")


def said(response: str, *, enforce: bool = False, draft: str = "I don't know") -> str:
    """One user-model reply in the layout the checkout's user prompt asks for."""
    reasons = {f"preference_{n}_satisfied": "looked at it" for n in (1, 2, 3)}
    return json.dumps(
        {
            **reasons,
            "enforce_preferences": enforce,
            "reasoning": "r",
            "draft_answer": draft,
            "should_terminate": END in response,
            "response": response,
        }
    )


def grade(accuracy: int) -> str:
    return json.dumps({"reasoning": "checked", "accuracy": accuracy})


async def play(
    kit: SimpleNamespace,
    agent: list[str],
    user: list[str],
    *,
    problem: Problem | None = None,
    condition: Condition | None = None,
    memory: Any = None,
) -> tuple[CollabBenchmark, Any, dict[str, ScriptedAPI]]:
    apis = {
        "agent": ScriptedAPI(agent, name="scripted/agent"),
        "user": ScriptedAPI(user, name="scripted/user"),
        "judge": ScriptedAPI([grade(1)], name="scripted/judge"),
    }
    roles = ModelRoles(dict(apis))
    problem = problem or kit.TRAIN.model_copy(update={"reference": "120 / 2 = 60 km/h"})
    protocol = Protocol(prompts=load_msc_prompts(CHECKOUT))
    bench = CollabBenchmark([problem], max_turns=3, protocol=protocol)
    spec = SessionSpec(id=problem.id, user_id="user-000", index=0, task=CollabTask(problem=problem))
    record = await play_session(
        bench,
        spec,
        kit.make_user(PREFS),
        models=roles,
        memory=memory(roles) if memory else create_memory("none", roles),
        condition=condition or Condition(name="none", memory="none"),
    )
    return bench, record, apis


def test_the_checkout_s_constants_and_task_lines_are_read() -> None:
    prompts = load_msc_prompts(CHECKOUT)
    assert prompts.agent.name == "agent_system_prompt_no_json"
    assert prompts.agent.render(max_tokens="2048").startswith("You help people with their")
    assert prompts.user.name == "user_system_prompt_profile_with_preferences"
    assert prompts.user_plain is not None
    assert prompts.user_plain.name == "user_system_prompt_profile_without_preferences"
    assert prompts.judge.name == "accuracy_prompt_qa"
    assert prompts.end_token == END
    assert prompts.tasks["math-hard"] == "Get help with this hard math question:"
    digest = hashlib.sha256(PROMPTS.read_bytes()).hexdigest()[:12]
    assert prompts.source == f"MultiSessionCollab collaborativeagents/prompts.py sha256:{digest}"
    assert not prompts.packaged and packaged_prompts().packaged


def test_our_prompts_are_the_default() -> None:
    assert protocol_of(CollabOptions()).prompts == packaged_prompts()
    chosen = protocol_of(CollabOptions(prompts_from=str(CHECKOUT))).prompts
    assert chosen.source.startswith("MultiSessionCollab") and chosen.end_token == END


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("math_hard/testset_size20_seed42", "Get help with this hard math question:"),
        ("medqa/testset_size20_seed42", "Get help with this clinical question:"),
        ("generated", "Get help with this math question:"),  # no MSC dataset: by kind
    ],
)
def test_the_task_line_is_the_dataset_s(source: str, line: str) -> None:
    problem = Problem(id="p", source=source, kind="math", question="1 + 1?", answer="2")
    assert load_msc_prompts(CHECKOUT).task_line(problem) == line


async def test_a_session_runs_the_checkout_s_prompts(kit: SimpleNamespace) -> None:
    """The agent's instructions, the user's system prompt (its task line, persona and
    numbered preferences filled in), the user's reply layout, its end token and the
    judge's prompt all come from the checkout; the outcome and the report name them."""
    user = [said("A train question."), said(f"Thanks. {END}", draft="60 km/h")]
    bench, record, apis = await play(kit, ["What are the numbers?"], user)
    assert record.status == "ok", record.events
    instructions = apis["agent"].requests[0].messages[0].content
    assert instructions == load_msc_prompts(CHECKOUT).agent.text
    assert "Ask before you guess" in instructions
    system = apis["user"].requests[0].messages[0].content
    assert system.startswith("You are role-playing someone who needs help.")
    assert "Get help with this math question:\nA train travels 120 km" in system
    assert "Ada, a carpenter" in system and f'write "{END}"' in system
    assert "\n1. " in system and "\n3. " in system
    schema = apis["user"].requests[0].json_schema
    assert schema is not None and set(schema["properties"]) == set(MscPublishedTurn.model_fields)
    judged = apis["judge"].requests[0].messages[0].content
    assert judged.startswith("Decide whether an answer is right.")
    assert "Worked solution: 120 / 2 = 60 km/h" in judged and "Answer to check: 60 km/h" in judged
    assert record.turns[0].text == OPENING
    assert record.events_of(StopEvent)[0].reason == StopReason.USER_ENDED
    assert record.outcome.draft == "60 km/h"
    assert record.outcome.prompts == (
        f"{load_msc_prompts(CHECKOUT).source}: agent_system_prompt_no_json, "
        "user_system_prompt_profile_with_preferences, accuracy_prompt_qa"
    )
    (table,) = [t for t in bench.report_tables([record]) if t.title.startswith("Prompts")]
    assert table.rows == [["none", record.outcome.prompts]]


async def test_one_enforce_flag_is_one_enforcement_of_no_preference_in_particular(
    kit: SimpleNamespace,
) -> None:
    """MSC's prompt gives one enforce flag per message, no per-preference verdict: UE counts
    the message once, and each preference reads as the flag says."""
    agent = ["- What are the numbers?", "It is 60 km/h."]
    user = [said("A train question."), said("Bullet points, please.", enforce=True)]
    user.append(said(f"Good. {END}", draft="60"))
    bench, record, _ = await play(kit, agent, user)
    assert [e.preference_id for e in record.events_of(EnforcementEvent)] == [""]
    verdicts = [e for e in record.events_of(PreferenceVerdictEvent) if e.turn == 3]
    assert [v.model_satisfied for v in verdicts] == [False, False, False]
    assert bench.score(record)["UE"] == 1.0 and bench.score(record)["UE_pref"] == 1.0


async def test_a_user_without_preferences_gets_the_plain_prompt(kit: SimpleNamespace) -> None:
    condition = Condition(name="plain", memory="none", settings={"preferences": False})
    user = [
        json.dumps(
            {"reasoning": "r", "draft_answer": "60", "should_terminate": True, "response": END}
        )
    ]
    _, record, apis = await play(kit, [], user, condition=condition)
    system = apis["user"].requests[0].messages[0].content
    assert system.startswith("You are role-playing someone who needs\nhelp, and you have no")
    assert set(apis["user"].requests[0].json_schema["properties"]) == {  # type: ignore[index]
        "reasoning",
        "draft_answer",
        "should_terminate",
        "response",
    }
    assert "user_system_prompt_profile_without_preferences" in record.outcome.prompts


async def test_our_prompts_leave_no_prompts_table(kit: SimpleNamespace) -> None:
    _, played = await kit.Harness(["Fine."], kit.scripted_user("Hi.", [])).run(max_turns=1)
    assert played.outcome.prompts == ""
    assert prompts_table([played]).rows == []


def _broken(tmp_path: Path, old: str, new: str, file: str = "prompts.py") -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, root)
    path = next(root.rglob(file))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return root


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("agent_system_prompt_no_json =", "agent_prompt =", "has no 'agent_system_prompt_no_json'"),
        ('termination_signal = "<<CHAT OVER>>"', "termination_signal = str(1)", "no string"),
        ('termination_signal = "<<CHAT OVER>>"', 'termination_signal = "  "', "is empty"),
        ("{user_persona}", "{persona}", "uses the field {persona}"),
        ("{user_persona}", "{0}", "uses the field {0}"),
        ("Problem: {problem}", "Problem:", "'accuracy_prompt_qa' has no {problem}"),
        (
            "# What you need\n{user_task_description}\n{problem}",
            "{user_task_description}",
            "no {problem}",
        ),
        ("{user_preferences}", "{user_preferences", "not a valid template"),
        ("termination_signal =", "termination_signal = = ", "not valid Python"),
    ],
)
def test_a_broken_checkout_is_one_line_naming_the_file(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    root = _broken(tmp_path, old, new)
    with pytest.raises(MscPromptsError, match=re.escape(message)) as info:
        load_msc_prompts(root)
    assert "prompts.py" in str(info.value) and "\n" not in str(info.value)


def test_task_lines_must_cover_math_and_multiple_choice(tmp_path: Path) -> None:
    root = _broken(tmp_path, '"mmlu": {', '"other": {', "__init__.py")
    with pytest.raises(MscPromptsError, match="no task_description for 'mmlu'"):
        load_msc_prompts(root)


@pytest.mark.parametrize(
    "missing", ["", "collaborativeagents/prompts.py", "collaborativeagents/datasets/__init__.py"]
)
def test_a_folder_that_is_no_checkout_is_refused(tmp_path: Path, missing: str) -> None:
    root = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, root)
    if missing:
        (root / missing).unlink()
        match = f"no {missing}"
    else:
        root = tmp_path / "absent"
        match = "not a folder"
    with pytest.raises(MscPromptsError, match=match):
        load_msc_prompts(root)


def test_the_checkout_s_code_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = _broken(
        tmp_path, "termination_signal =", f"open({str(marker)!r}, 'w')\ntermination_signal ="
    )
    assert load_msc_prompts(root).end_token == END
    assert not marker.exists()


def test_prompts_from_takes_the_msc_session() -> None:
    with pytest.raises(ValueError, match="prompts_from sets the msc session's prompts"):
        CollabOptions(prompts_from=str(CHECKOUT), session="guarded")


async def test_memory_s_notes_fill_msc_s_agent_prompt_with_notes(kit: SimpleNamespace) -> None:
    """With notes on the user, the agent's system prompt is MSC's collaborator prompt with
    notes (the notes in its own slot, nothing of ours around them), and the picked notes
    open the greeting, joined to it as MSC's code joins them."""
    from rapport.memory import BaseMemory

    class Notes(BaseMemory):
        name = "notes"

        async def context(self, user, session):  # type: ignore[no-untyped-def]
            return "Wants bullet points."

        async def recall(self, user, conversation):  # type: ignore[no-untyped-def]
            return "Picked: bullets."

    user = [said("A train question."), said(f"Thanks. {END}", draft="60 km/h")]
    _bench, record, apis = await play(kit, ["What are the numbers?"], user, memory=Notes)
    assert record.status == "ok", record.events
    system, greeting, _ = apis["agent"].requests[0].messages
    assert system.content == "You help people; your notes on this person:\nWants bullet points."
    assert greeting.content == f"Picked: bullets.{OPENING}"  # MSC joins them with nothing
    assert record.outcome.prompts.endswith(
        ": reflective_agent_system_prompt_no_json, "
        "user_system_prompt_profile_with_preferences, accuracy_prompt_qa"
    )
