"""The benchmark end to end on the scripted model: history replay, eval, scoring, report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rapport.envs import Condition, memory_options_for
from rapport.envs.mpt import MPTBenchmark, MPTEvalTask, MPTOptions
from rapport.eval import play_session
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent, ExperimentConfig, SessionRecord, ToolCallEvent
from rapport.memory import create_memory


def _gold_agent(bench: MPTBenchmark, specs: list[Any]) -> ScriptedAPI:
    """Answers each eval instance with its gold call (found by the query text)."""
    by_query = {
        s.task.instance.dialogue[-1].text: s.task.instance.gold.arguments
        for s in specs
        if isinstance(s.task, MPTEvalTask)
    }

    def respond(request: Request) -> str:
        query = [m.content for m in request.messages if m.role == "user"][-1]
        return json.dumps(by_query[query])

    return ScriptedAPI(responder=respond)


async def _run(bench: MPTBenchmark, api: ScriptedAPI, memory: str = "none") -> list[SessionRecord]:
    roles = ModelRoles({"all": api})
    mem = create_memory(memory, roles)
    user = bench.users(1, 11)[0]
    return [
        await play_session(
            bench,
            spec,
            user,
            models=roles,
            memory=mem,
            condition=Condition(name=memory, memory=memory),
        )
        for spec in bench.sessions(user, 3, 11)
    ]


def test_options_come_from_cli_strings() -> None:
    config = ExperimentConfig(
        benchmark="mpt",
        options={"drift": "0.5", "paraphrase": "false", "sessions_min": "8", "max_eval": "2"},
    )
    bench = MPTBenchmark.from_config(config)
    assert bench.options.drift == 0.5 and bench.options.sessions_min == 8
    with pytest.raises(ValidationError):
        MPTOptions.model_validate({"sessions_min": 9, "sessions_max": 3})
    with pytest.raises(ValidationError):
        MPTOptions.model_validate({"nope": 1})


def test_challenges_choose_which_eval_instances_generated_users_get() -> None:
    recall = MPTBenchmark.from_config(
        ExperimentConfig(benchmark="mpt", options={"challenges": "recall", "per_cell": "2"})
    )
    every = MPTBenchmark(MPTOptions(per_cell=2))
    kinds = {
        name: [
            s.task.instance.challenge
            for user in bench.users(8, 0)
            for s in bench.sessions(user, 1, 0)
            if isinstance(s.task, MPTEvalTask)
        ]
        for name, bench in (("recall", recall), ("every", every))
    }
    assert kinds["recall"] and set(kinds["recall"]) == {"recall"}
    assert {"recall", "induction", "transfer"} <= set(kinds["every"])
    with pytest.raises(ValidationError):
        MPTOptions.model_validate({"challenges": "recall,guessing"})
    with pytest.raises(ValidationError, match="generated users"):
        MPTOptions.model_validate({"release": "r", "challenges": "recall"})


@pytest.mark.parametrize(
    "options",
    [
        {"release": ""},
        {"release": "  "},
        {"release": "r", "data": ""},
        {"release": "r", "dataset": " "},
    ],
)
def test_an_empty_release_path_is_refused_not_read_as_none(options: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="is empty"):
        MPTOptions.model_validate(options)


async def test_history_sessions_replay_dialogue_and_calls() -> None:
    bench = MPTBenchmark()
    records = await _run(bench, ScriptedAPI(responder=lambda r: "{}"))
    history = [r for r in records if r.split == "train"]
    assert history and all(r.scores == {} for r in history)
    for record in history:
        [event] = record.events_of(ToolCallEvent)
        assert record.turns[event.turn].tool_calls[0].arguments == event.arguments


async def test_a_gold_answer_scores_full_marks() -> None:
    bench = MPTBenchmark()
    user = bench.users(1, 11)[0]
    api = _gold_agent(bench, bench.sessions(user, 3, 11))
    evals = [r for r in await _run(bench, api, "full_history") if r.split == "eval"]
    assert evals
    for record in evals:
        assert record.scores["p_em"] == 1.0 and record.scores["oa_f1"] == 1.0
        assert record.scores["ea_f1"] == 1.0 and record.scores["valid"] == 1.0
        assert record.scores["token_ratio"] == pytest.approx(1.0)
    tables = bench.report_tables(evals)
    assert tables[0].columns[:10] == [
        *("method", "challenge", "regime", "n"),
        "P-EM (mean over context-guided instances)",
        "EA-F1 (micro over context-guided instances)",
        "OA-F1 (micro over context-guided instances)",
        "P (micro over context-free instances)",
        "R (micro over context-free instances)",
        "F1 (micro over context-free instances)",
    ]
    for row in tables[0].rows:  # each regime shows its own metrics, as the paper reports them
        guided, free = row[4:7], row[7:10]
        assert (free if row[2] == "context-guided" else guided) == ["-"] * 3


async def test_an_output_that_stays_invalid_is_an_error_not_a_crash() -> None:
    bench = MPTBenchmark(MPTOptions(max_eval=1))
    records = await _run(bench, ScriptedAPI(responder=lambda r: "not json"))
    [record] = [r for r in records if r.split == "eval"]
    assert record.status == "error"
    assert record.events_of(ErrorEvent)[0].where == "agent"
    assert record.scores["valid"] == 0.0 and record.scores["p_em"] == 0.0


async def test_paraphrase_rewrites_user_turns_and_keeps_them_on_failure() -> None:
    bench = MPTBenchmark(MPTOptions(paraphrase=True, max_eval=0))

    def respond(request: Request) -> str:
        text = request.messages[1].content  # the turn to reword (retries append after it)
        return "broken" if "?" in text else json.dumps({"text": f"In other words: {text}"})

    records = await _run(bench, ScriptedAPI(responder=respond))
    user_turns = [t for r in records for t in r.turns if t.speaker == "user"]
    assert any(t.text.startswith("In other words: ") for t in user_turns)
    failed = [e for r in records for e in r.events_of(ErrorEvent) if e.where == "paraphrase"]
    kept = [t for t in user_turns if "?" in t.text]
    assert failed and len(failed) == len(kept)
    assert not any(t.text.startswith("In other words: ") for t in kept)


def test_the_truth_hook_describes_current_preferences() -> None:
    bench = MPTBenchmark()
    user = bench.users(1, 2)[0]
    truth = bench.truth(user, Condition(name="oracle", memory="oracle"))
    assert truth and truth == user.attributes["truth"]


@pytest.mark.parametrize(
    ("flags", "users"), [([], 4), (["--users", "2"], 2), (["--users", "5"], 0)]
)
def test_a_release_run_takes_every_example_unless_told(
    tmp_path: Path, flags: list[str], users: int
) -> None:
    from rapport.cli import main
    from rapport.store import RunStore

    from .release_fixture import EXAMPLES, write_release

    root = write_release(tmp_path / "release")
    data = tmp_path / "four.json"
    examples = [dict(EXAMPLES[i % len(EXAMPLES)], example_id=f"ex-{i}") for i in range(4)]
    data.write_text(json.dumps(examples))
    argv = ["run", "mpt", "--release", str(root), "--dataset", "tiny-v1", "--data", str(data)]
    argv += flags
    argv += ["--model", "all=scripted/auto", "--run-dir", str(tmp_path / "r"), "--no-progress"]
    if not users:  # more than the data holds
        assert main(argv) == 2
        assert not (tmp_path / "r").exists()
        return
    assert main(argv) == 0
    assert main(argv) == 0  # the same command resumes the same run
    with RunStore(tmp_path / "r", create=False) as store:
        assert store.run().config.users == users
        assert [u.user_id for u in store.users()] == [f"mpt-ex-{i}" for i in range(users)]


def test_rag_retrieves_the_papers_top_k_on_mpt_unless_the_run_sets_it() -> None:
    paper = ExperimentConfig(benchmark="mpt", memory=["rag"])
    assert memory_options_for(paper, MPTBenchmark.memory_defaults, {"rag"}) == {"rag": {"k": 5}}
    own = ExperimentConfig(benchmark="mpt", memory=["rag"], memory_options={"rag": {"k": 6}})
    assert memory_options_for(own, MPTBenchmark.memory_defaults, {"rag"}) == {"rag": {"k": 6}}
