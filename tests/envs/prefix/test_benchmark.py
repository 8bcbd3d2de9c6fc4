"""A whole PrefIx session on scripted models: accuracy, alignment, judges, report tables."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from rapport.log import ErrorEvent, JudgeEvent, NoteEvent, ToolCallEvent, UserGuardEvent

pytest.importorskip("bfcl_eval")

from rapport.envs import Condition, SessionSpec, create_benchmark
from rapport.envs.prefix import (
    DONE,
    GO_ON,
    PrefixBenchmark,
    PrefixOptions,
    PrefixOutcome,
    PrefixTask,
    SafeExecutor,
    parse_call,
    task_by_id,
    ux_dimensions,
)
from rapport.envs.prefix._report import headline_events
from rapport.envs.prefix._rubric import OWN
from rapport.envs.prefix._session import USER_REPLACED
from rapport.eval import play_session, run_experiment
from rapport.llm import ModelRoles, Request, ScriptedAPI, ToolCall
from rapport.log import ExperimentConfig, SessionRecord
from rapport.memory import BaseMemory
from rapport.store import RunStore

TASK = task_by_id("multi_turn_base_12")  # cd, touch, echo, wc: two writes
WRITES = {"touch", "echo"}


def _plan(confirm: bool, turn: int) -> list[ToolCall]:
    """The agent's calls in one turn: the reference calls of that turn of the task."""
    plan = []
    for i, call in enumerate(TASK.ground_truth[turn]):
        parsed = parse_call(call)
        if confirm and parsed.name in WRITES:
            plan.append(
                ToolCall(
                    id=f"q{turn}.{i}",
                    name="confirmation",
                    arguments={"execution_function": parsed.name, "content": f"Run {parsed.name}?"},
                )
            )
        plan.append(ToolCall(id=f"c{turn}.{i}", name=parsed.name, arguments=dict(parsed.kwargs)))
    return plan


def _agent(confirm: bool, at_once: bool = False) -> ScriptedAPI:
    """Does each turn's part of the task after each message of the person (or the whole
    task after the first)."""

    def respond(request: Request) -> str | ToolCall:
        users = [i for i, m in enumerate(request.messages) if m.role == "user"]
        turn = min(len(users), len(TASK.ground_truth)) - 1
        if at_once:
            users, turn = users[:1], len(TASK.ground_truth) - 1
            plan = [c for t in range(len(TASK.ground_truth)) for c in _plan(confirm, t)]
        else:
            plan = _plan(confirm, turn)
        done = sum(m.role == "tool" for m in request.messages[users[-1] :])
        if done < len(plan):
            return plan[done]
        return "All done." if turn == len(TASK.ground_truth) - 1 else "That part is done."

    return ScriptedAPI(responder=respond)


def _user(request: Request) -> str:
    if request.json_schema is not None:
        return json.dumps({"instruction": " ".join(TASK.turns)})
    last = request.messages[-1].content
    if "All done" in last:
        return "Great, thanks. <END>"
    if "part is done" in last:
        return "Good, now the next part."
    return "Yes, go ahead." if "?" in last else "Please work on my summary file."


def _judge(score: int, turns: list[int], alignment: int | None = None) -> ScriptedAPI:
    """A judge giving ``score`` (``alignment`` on preference alignment): per dimension (the
    default judging) or every dimension in one reply."""

    def entry(dim: str) -> dict[str, object]:
        value = alignment if dim == "preference_alignment" and alignment else score
        return {"score": value, "justification": "seen", "evidence_turns": turns}

    def respond(request: Request) -> str:
        asked = re.search(r"^Dimension: (\S+)$", request.messages[-1].content, re.MULTILINE)
        if asked is None:
            return json.dumps({d.id: entry(d.id) for d in ux_dimensions()})
        cited = [f"t{t}" for t in turns]
        verdict = entry(asked.group(1)) | {"dimension": asked.group(1)}
        return json.dumps(verdict | {"evidence_turn_ids": cited})

    return ScriptedAPI(responder=respond)


def _models(
    confirm: bool, user: Callable[[Request], str] = _user, agent: ScriptedAPI | None = None
) -> ModelRoles:
    return ModelRoles(
        {
            "agent": agent or _agent(confirm),
            "user": ScriptedAPI(responder=user),
            "judge": _judge(4, [0, 1], alignment=5),
            "judge2": _judge(2, [2], alignment=5),
        }
    )


def _bench(**options: str) -> PrefixBenchmark:
    config = ExperimentConfig(benchmark="prefix", memory=["none", "reflection"], options=options)
    bench = create_benchmark(config)
    assert isinstance(bench, PrefixBenchmark)
    return bench


async def _session(
    bench: PrefixBenchmark,
    prompting: str,
    confirm: bool,
    user_model: Callable[[Request], str] = _user,
    agent: ScriptedAPI | None = None,
) -> SessionRecord:
    user = next(u for u in bench.users(1, 0) if u.preferences == ["tool_initiative_reactive"])
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    models = _models(confirm, user_model, agent)
    condition = Condition(
        name=f"{prompting}+none", memory="none", settings={"prompting": prompting}
    )
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    return record


def test_cli_strings_become_options_and_conditions_pair_prompting_with_memory() -> None:
    bench = _bench(condition="no_p,p", settings="tool_initiative_reactive,tool_medium", tasks="2")
    assert bench.options.tasks == 2 and bench.options.condition == ["no_p", "p"]
    config = ExperimentConfig(benchmark="prefix", memory=["none", "reflection"])
    names = [c.name for c in bench.conditions(config)]
    assert names == ["no_p+none", "no_p+reflection", "p+none", "p+reflection"]
    user = bench.users(3, 0)[0]
    sessions = bench.sessions(user, 5, seed=1)
    assert len(sessions) == 2 and sessions == bench.sessions(user, 5, seed=1)
    with pytest.raises(ValueError):
        PrefixOptions.model_validate({"settings": "no_such_setting"})


async def test_an_agent_that_confirms_each_write_scores_full_accuracy_and_alignment() -> None:
    record = await _session(_bench(settings="tool_initiative_reactive"), "p", confirm=True)
    assert record.scores["bfcl_pass"] == 1.0 and record.scores["accuracy"] == 1.0
    assert record.scores["align_recall"] == 1.0 and record.scores["align_precision"] == 1.0
    asked = [e.name for e in record.events_of(ToolCallEvent) if e.interaction]
    assert asked == ["confirmation", "confirmation"]
    assert record.scores["ux"] == pytest.approx(3.0)  # (4 + 2) / 2 on the 7 UX dimensions
    assert record.scores["alignment"] == 5.0  # judged apart, never blended into ux
    assert "ux.preference_alignment" not in record.scores
    judged = record.events_of(JudgeEvent)
    # the paper's stability protocol gives the first user's first session 20 runs
    assert len(judged) == 20 * 2 * len(ux_dimensions())
    assert len(headline_events(record)) == 2 * len(ux_dimensions())
    turn_ids = {t.index for t in record.turns}
    assert all(set(e.evidence_turns) <= turn_ids for e in judged)
    assert record.turns[-1].speaker == "user" and "<END>" in record.turns[-1].text


async def test_a_judge_whose_output_stays_invalid_makes_the_session_an_error() -> None:
    bench = _bench(settings="tool_initiative_reactive", reliability="repeats")
    user = next(u for u in bench.users(1, 0) if u.preferences == ["tool_initiative_reactive"])
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    models = ModelRoles(
        {
            "agent": _agent(True),
            "user": ScriptedAPI(responder=_user),
            "judge": _judge(4, [0, 1], alignment=5),
            "judge2": ScriptedAPI(responder=lambda _r: "not json"),
        }
    )
    condition = Condition(name="p+none", memory="none", settings={"prompting": "p"})
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    assert record.status == "error"
    errors = [(e.where, e.error_type) for e in record.events_of(ErrorEvent)]
    assert errors == [("judge2", "OutputValidationError")]
    assert len(record.events_of(JudgeEvent)) == len(ux_dimensions())  # the other judge's scores
    assert isinstance(record.outcome, PrefixOutcome) and record.outcome.accuracy


async def test_a_judge_that_always_fails_is_retried_on_resume_until_its_attempts_are_spent(
    tmp_path: Path,
) -> None:
    config = ExperimentConfig(
        benchmark="prefix",
        memory=["none"],
        options={"settings": "each_confirmation", "condition": "no_p"},
        models={"all": "scripted/auto", "judge": "scripted/fixed:not json"},
        run_dir=tmp_path,
    )
    first = await run_experiment(config, progress=False)
    assert first.sessions_run == first.errors == first.error_sessions > 0
    with RunStore.open_readonly(tmp_path) as store:
        for record in store.sessions():
            (error,) = record.events_of(ErrorEvent)
            assert (error.where, error.error_type) == ("judge", "OutputValidationError")
            assert "ux" not in record.scores
    again = await run_experiment(config, progress=False, max_attempts=2)
    assert again.retried == again.sessions_run == first.sessions_run  # --retry-errors
    spent = await run_experiment(config, progress=False, max_attempts=2)
    assert spent.sessions_run == 0 and spent.exhausted == spent.error_sessions == first.errors


async def test_an_agent_doing_the_whole_task_in_its_first_turn_fails_per_turn_accuracy() -> None:
    bench = _bench(settings="tool_initiative_reactive")
    user = bench.users(1, 0)[0]
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    models = ModelRoles(
        {
            "agent": _agent(confirm=False, at_once=True),
            "user": ScriptedAPI(responder=_user),
            "judge": _judge(4, [0]),
            "judge2": _judge(2, [0]),
        }
    )
    condition = Condition(name="no_p+none", memory="none", settings={"prompting": "no_p"})
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    assert record.scores["bfcl_pass"] == 0.0  # bfcl-eval's per-turn check fails it
    assert record.scores["accuracy"] == 1.0  # every reference call was made, though
    assert isinstance(record.outcome, PrefixOutcome) and record.outcome.accuracy is not None
    assert record.outcome.accuracy.failed_turn == 0


async def test_report_tables_show_gains_and_reliability() -> None:
    bench = _bench(settings="tool_initiative_reactive")
    plain = await _session(bench, "no_p", confirm=False)
    asked = await _session(bench, "p", confirm=True)
    assert plain.scores["align_recall"] == 0.0 and asked.scores["align_recall"] == 1.0
    tables = bench.report_tables([plain, asked])
    titles = [t.title for t in tables]
    assert len(titles) == 6 and "reliability" in titles[4]
    stats = [r[0] for r in tables[4].rows]
    assert "alpha over the 8 judged dimensions" in stats
    assert (
        "run-to-run protocol: paper (20 judge runs on 2 sessions, kept out of the scores)" in stats
    )
    assert [s for s in stats if str(s).startswith("ICC ")] == [
        f"ICC {d.id}" for d in ux_dimensions()
    ]
    alignment = {(r[1], r[2]): r[4] for r in tables[3].rows if r[0] == "strategy"}
    assert alignment[("align_recall", "p+none")] is None  # no_p recall is 0: gain undefined
    summary = {r[0]: r for r in tables[0].rows}
    assert summary["p+none"][3:5] == [1.0, 1.0]  # accuracy, bfcl_pass
    # the per-setting means: one sample per setting and condition here
    assert [r[:4] for r in tables[1].rows] == [
        ["tool_initiative_reactive", "no_p+none", 1, 1.0],
        ["tool_initiative_reactive", "p+none", 1, 1.0],
    ]
    installed = "bfcl-eval 2026.3.23 (installed, v4)"
    assert tables[5].rows == [
        ["tool_initiative_reactive", installed, "coarsened by the user model", OWN, "prefix", 2]
    ]


async def test_a_user_that_keeps_naming_its_preference_ends_the_session_with_an_error() -> None:
    def leaky(request: Request) -> str:
        if request.json_schema is not None:
            return _user(request)
        return "Please ask for my confirmation before each change."

    record = await _session(_bench(settings="tool_initiative_reactive"), "no_p", False, leaky)
    errors = record.events_of(ErrorEvent)
    assert [e.where for e in errors] == ["user"]
    assert record.status == "error"
    assert not record.turns  # the leaking message never reached the agent


@pytest.mark.parametrize("acts", [True, False])
async def test_a_user_model_out_of_role_is_replaced_by_code(acts: bool) -> None:
    def assistant_voiced(request: Request) -> str:
        if request.json_schema is not None:
            return _user(request)
        return "You're welcome! If you have any other questions, feel free to ask."

    talker = ScriptedAPI(responder=lambda _r: "Anything else I can do?")
    record = await _session(
        _bench(settings="tool_initiative_reactive", max_messages="12"),
        "no_p",
        False,
        assistant_voiced,
        agent=None if acts else talker,
    )
    users = [t.text for t in record.turns if t.speaker == "user"]
    notes = [e for e in record.events_of(UserGuardEvent) if e.reason.startswith(USER_REPLACED)]
    assert users[0] == " ".join(TASK.turns)  # the opening is the instruction
    assert len(notes) == len(users)
    if acts:  # the agent works after each message: the user asks it to go on
        assert set(users[1:]) == {GO_ON} and len(users) > 2
    else:  # the agent only talks: code ends the session
        assert users[1:] == [DONE]
    assert record.status == "ok"


def test_confirmation_users_only_get_tasks_with_two_writes() -> None:
    bench = _bench(settings="each_confirmation", tasks="3")
    for spec in bench.sessions(bench.users(1, 0)[0], 3, seed=0):
        task = task_by_id(spec.task_as(PrefixTask).task_id)
        trial = SafeExecutor(task)
        assert sum(trial.run(call).wrote for call in task.reference_calls) >= 2


def test_combined_users_hold_preferences_of_different_attributes() -> None:
    bench = _bench(settings="each_confirmation,silent,tool_medium", combine="2")
    groups = [u.preferences for u in bench.users(1, 0)]
    assert groups[0] == ["each_confirmation", "tool_medium"]  # skips the same attribute
    assert all(len(g) == 2 for g in groups)


async def test_a_combined_user_is_aligned_per_preference() -> None:
    bench = _bench(settings="tool_initiative_reactive,tool_medium", combine="2")
    user = bench.users(1, 0)[0]
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    models = _models(confirm=True)
    condition = Condition(name="p+none", memory="none", settings={"prompting": "p"})
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    assert isinstance(record.outcome, PrefixOutcome)
    per = {a.setting: a.recall for a in record.outcome.alignment}
    assert per == {"tool_initiative_reactive": 1.0, "tool_medium": 0.0}
    assert bench.score(record)["align_recall"] == 0.5


async def test_a_task_that_coarsening_drops_is_replaced_by_a_stand_in() -> None:
    bench = _bench(settings="tool_initiative_reactive", tasks="1")
    user = bench.users(1, 0)[0]
    (spec,) = bench.sessions(user, 1, seed=0)
    task = spec.task_as(PrefixTask)
    assert len(task.backups) == 2 and TASK.id not in task.backups
    spec = spec.model_copy(update={"task": task.model_copy(update={"backups": [TASK.id]})})

    def loses_values(request: Request) -> str:
        if request.json_schema is not None:  # keeps the values only for the stand-in
            kept = any(TASK.turns[0][:30] in m.content for m in request.messages)
            return json.dumps({"instruction": " ".join(TASK.turns) if kept else "Do it."})
        return _user(request)

    models = _models(confirm=True, user=loses_values)
    condition = Condition(name="p+none", memory="none", settings={"prompting": "p"})
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    assert isinstance(record.outcome, PrefixOutcome)
    assert not record.outcome.dropped and record.outcome.task_id == TASK.id
    assert any("dropped" in e.text for e in record.events_of(NoteEvent))
    assert bench.score(record)["accuracy"] == 1.0


def test_the_papers_reliability_protocol_gives_its_runs_to_five_samples() -> None:
    bench = _bench(reliability="paper", reliability_runs="20")
    users = bench.users(1, 0)
    runs = [bench.judge_runs(bench.sessions(u, 2, seed=0)[0], u) for u in users]
    assert runs[:5] == [20] * 5 and set(runs[5:]) == {1}
    later = bench.sessions(users[0], 2, seed=0)[1]
    assert bench.judge_runs(later, users[0]) == 1
    plain = _bench(reliability="repeats", judge_repeats="3")
    assert bench.options.reliability == "paper" and plain.options.reliability == "repeats"
    assert plain.judge_runs(later, users[0]) == 3


async def test_an_interaction_call_without_its_required_fields_is_refused_and_not_counted() -> None:
    bench = _bench(settings="tool_initiative_reactive")
    user = bench.users(1, 0)[0]
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    legacy = ToolCall(id="q", name="confirmation", arguments={"question": "May I?"})

    def agent(request: Request) -> str | ToolCall:
        return legacy if not any(m.role == "tool" for m in request.messages) else "All done."

    models = ModelRoles(
        {
            "agent": ScriptedAPI(responder=agent),
            "user": ScriptedAPI(responder=_user),
            "judge": _judge(3, [0]),
        }
    )
    condition = Condition(name="p+none", memory="none", settings={"prompting": "p"})
    record = await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
    (call,) = record.events_of(ToolCallEvent)
    assert call.error is not None and "unknown field(s) question" in call.error
    assert isinstance(record.outcome, PrefixOutcome)
    assert record.outcome.alignment[0].concerned_calls == 0
    assert not any("May I?" in t.text for t in record.turns if t.speaker == "user")


def test_long_results_can_be_cut_for_small_context_models() -> None:
    from rapport.envs.prefix._session import cut

    assert cut("x" * 500, None) == "x" * 500
    assert cut("x" * 500, 200) == "x" * 200 + "\n[... 300 more characters not shown]"
    assert _bench(result_chars="1500").options.result_chars == 1500
    assert _bench().options.result_chars is None


async def test_judges_read_the_whole_log_and_a_cut_only_past_their_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rapport.llm import ContextFull

    monkeypatch.setattr("rapport.envs.prefix._session.JUDGE_WINDOW", 600)
    seen: list[str] = []

    def small(limit: int) -> ScriptedAPI:
        def respond(request: Request) -> str:
            log = request.messages[-1].content
            seen.append(log)
            if len(log) > limit:
                raise ContextFull(f"{len(log)} characters are past this judge's context")
            entry = {"score": 3, "justification": "seen", "evidence_turns": []}
            return json.dumps({d.id: entry for d in ux_dimensions()})

        return ScriptedAPI(responder=respond)

    def models(judge: ScriptedAPI) -> ModelRoles:
        user = ScriptedAPI(responder=_user)
        return ModelRoles({"agent": _agent(True), "user": user, "judge": judge})

    bench = _bench(settings="tool_initiative_reactive", judging="all_at_once")
    whole = await _session_with(bench, models(small(10**6)))
    assert not whole.events_of(NoteEvent) and whole.events_of(JudgeEvent)
    assert "omitted" not in seen[-1] and all(t.text.strip() in seen[-1] for t in whole.turns)
    cut = await _session_with(bench, models(small(len(seen[-1]) - 1)))
    [note] = cut.events_of(NoteEvent)
    assert "past a judge's context" in note.text and "600 characters" in note.text
    assert cut.events_of(JudgeEvent) and "[... turns omitted ...]" in seen[-1]
    windowed = await _session_with(
        _bench(settings="tool_initiative_reactive", judging="all_at_once", judge_chars="1000")
    )
    assert not windowed.events_of(NoteEvent), "a window asked for is no cut past the context"


async def _session_with(bench: PrefixBenchmark, models: ModelRoles | None = None) -> SessionRecord:
    user = next(u for u in bench.users(1, 0) if u.preferences == ["tool_initiative_reactive"])
    spec = SessionSpec(id=TASK.id, user_id=user.id, index=0, task=PrefixTask(task_id=TASK.id))
    models = models or _models(True)
    condition = Condition(name="p+none", memory="none", settings={"prompting": "p"})
    return await play_session(
        bench, spec, user, models=models, memory=BaseMemory(models), condition=condition
    )
