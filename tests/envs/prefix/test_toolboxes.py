"""PrefIx's two added toolboxes: our backends, their tool docs and tasks, checked per turn."""

from __future__ import annotations

import inspect
import json

import pytest

pytest.importorskip("bfcl_eval")

from rapport.envs import Condition, SessionSpec, create_benchmark
from rapport.envs.prefix import (
    BfclTask,
    PrefixBenchmark,
    PrefixTask,
    SafeExecutor,
    check_accuracy,
    load_tasks,
    parse_call,
    system_tools,
    task_by_id,
    ux_dimensions,
)
from rapport.envs.prefix._checker import replay_turns
from rapport.envs.prefix._failures import FailurePlan
from rapport.envs.prefix._toolboxes import toolbox_docs
from rapport.envs.prefix._trading_beaver import TradingBeaver
from rapport.envs.prefix._travel_beaver import TravelBeaver
from rapport.eval import play_session
from rapport.llm import ModelRoles, Request, ScriptedAPI, ToolCall
from rapport.log import ExperimentConfig
from rapport.memory import BaseMemory

DOCS = {name: toolbox_docs(name) for name in ("TradingBeaver", "TravelBeaver")}


def test_ground_truth_replayed_turn_by_turn_passes_every_toolbox_task() -> None:
    tasks = load_tasks("toolbox")
    assert len(tasks) >= 6
    assert {c for t in tasks for c in t.involved_classes} == {"TradingBeaver", "TravelBeaver"}
    for task in tasks:
        trial = replay_turns(task, task.ground_truth)
        assert not any(c.refused or c.error for c in trial.log), task.id
        result = check_accuracy(task, trial)
        assert (result.accuracy, result.bfcl_pass) == (1.0, 1.0), (task.id, result)


@pytest.mark.parametrize("task", load_tasks("toolbox"), ids=lambda t: t.id)
def test_every_call_in_the_last_turn_fails(task) -> None:  # type: ignore[no-untyped-def]
    turns = [[] for _ in task.ground_truth[:-1]] + [task.reference_calls]
    result = check_accuracy(task, replay_turns(task, turns))
    assert result.bfcl_pass == 0.0
    assert result.error_type == "multi_turn:empty_turn_model_response"
    assert result.accuracy == 1.0


def test_a_wrong_order_fails_the_state_check_of_its_turn() -> None:
    task = task_by_id("multi_turn_toolbox_0")
    turns = [list(t) for t in task.ground_truth]
    turns[1] = ["place_order(order_type='Buy', symbol='TSLA', price=660.0, amount=2)"]
    result = check_accuracy(task, replay_turns(task, turns))
    assert result.bfcl_pass == 0.0 and result.failed_turn == 1
    assert result.error_type == "multi_turn:instance_state_mismatch"


def test_a_wrong_read_fails_the_response_check_of_its_turn() -> None:
    task = task_by_id("multi_turn_toolbox_3")
    turns = [list(t) for t in task.ground_truth]
    turns[1] = ["compute_exchange_rate(base_currency='USD', target_currency='GBP', value=440.0)"]
    result = check_accuracy(task, replay_turns(task, turns))
    assert result.bfcl_pass == 0.0 and result.failed_turn == 1
    assert result.error_type == "multi_turn:execution_response_mismatch"


@pytest.mark.parametrize("backend", [TradingBeaver, TravelBeaver])
def test_tool_docs_name_every_public_function_with_its_parameters(backend: type) -> None:
    methods = {
        name: inspect.signature(method)
        for name, method in inspect.getmembers(backend, inspect.isfunction)
        if not name.startswith("_")
    }
    docs = {d["name"]: d["parameters"] for d in DOCS[backend.__name__]}
    assert set(docs) == set(methods)
    for name, signature in methods.items():
        params = {p for p in signature.parameters if p != "self"}
        required = {
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.default is inspect.Parameter.empty
        }
        assert set(docs[name]["properties"]) == params, name
        assert set(docs[name]["required"]) == required, name


def test_the_paper_s_function_sets() -> None:
    assert len(DOCS["TradingBeaver"]) == 22
    assert {d["name"] for d in DOCS["TravelBeaver"]} == {
        "compute_exchange_rate",
        "get_all_credit_cards",
        "get_budget_fiscal_year",
        "get_credit_card_balance",
        "get_flight_cost",
        "get_nearest_airport_by_city",
        "list_all_airports",
        "retrieve_invoice",
        "travel_get_login_status",
        "verify_traveler_information",
    }
    task = task_by_id("multi_turn_toolbox_5")
    assert len(system_tools(task)) == 32


def test_backends_are_deterministic_and_keep_their_rules() -> None:
    task = task_by_id("multi_turn_toolbox_1")
    logs = []
    for _ in range(2):
        trial = replay_turns(task, task.ground_truth)
        logs.append([c.result for c in trial.log])
    assert logs[0] == logs[1]
    trading = SafeExecutor(task)
    assert (
        "error"
        in trading.run("place_order(order_type='Buy', symbol='AAPL', price=1.0, amount=1)").result
    )
    deposit = "make_transaction(account_id=4410, xact_type='deposit', amount=5.0)"
    trading.run("trading_login(username='a', password='b')")
    assert "closed" in trading.run(deposit).result
    travel = SafeExecutor(task_by_id("multi_turn_toolbox_4"))
    backend = travel.instances["TravelBeaver"]
    for _ in range(5):
        assert (
            "Invalid"
            in travel.run("get_credit_card_balance(access_token='x', card_id='4455')").result
        )
    assert backend.token_expires_in == 0
    assert travel.run("travel_get_login_status()").result == '{"status": false}'
    assert (
        "expired"
        in travel.run("get_credit_card_balance(access_token='7x9k2m', card_id='4455')").result
    )


def test_injected_failures_reach_the_toolboxes_as_any_backend() -> None:
    task = task_by_id("multi_turn_toolbox_3")
    trial = SafeExecutor(task, failures=FailurePlan(targets={"get_flight_cost": 1}))
    call = (
        "get_flight_cost(travel_from='RMS', travel_to='SBK', travel_date='2024-12-03', "
        "travel_class='economy')"
    )
    first, second = trial.run(call), trial.run(call)
    assert first.injected and not second.injected
    assert second.result == '{"travel_cost_list": [440.0]}'


def _agent(task: BfclTask) -> ScriptedAPI:
    """Does each turn's reference calls after each message of the person, confirming writes."""

    def plan(turn: int) -> list[ToolCall]:
        calls = []
        for i, text in enumerate(task.ground_truth[turn]):
            parsed = parse_call(text)
            if parsed.name in WRITES:
                calls.append(
                    ToolCall(
                        id=f"q{turn}.{i}",
                        name="confirmation",
                        arguments={"execution_function": parsed.name, "content": "Go ahead?"},
                    )
                )
            calls.append(ToolCall(id=f"c{turn}.{i}", name=parsed.name, arguments=parsed.kwargs))
        return calls

    def respond(request: Request) -> str | ToolCall:
        users = [i for i, m in enumerate(request.messages) if m.role == "user"]
        turn = min(len(users), len(task.ground_truth)) - 1
        steps = plan(turn)
        done = sum(m.role == "tool" for m in request.messages[users[-1] :])
        if done < len(steps):
            return steps[done]
        return "All done." if turn == len(task.ground_truth) - 1 else "That part is done."

    return ScriptedAPI(responder=respond)


WRITES = {"trading_login", "add_to_watchlist", "place_order", "cancel_order"}


async def test_a_toolbox_task_plays_as_a_whole_session_on_scripted_models() -> None:
    task = task_by_id("multi_turn_toolbox_0")

    def user(request: Request) -> str:
        if request.json_schema is not None:
            return json.dumps({"instruction": " ".join(task.turns)})
        last = request.messages[-1].content
        if "All done" in last:
            return "Thanks. <END>"
        if "part is done" in last:
            return "Good, now the next part."
        return "Yes, go ahead." if "?" in last else "Please see to my trading account."

    judge = ScriptedAPI(
        responder=lambda _r: json.dumps(
            {
                d.id: {"score": 4, "justification": "ok", "evidence_turns": [0]}
                for d in ux_dimensions()
            }
        )
    )
    config = ExperimentConfig(
        benchmark="prefix",
        memory=["none"],
        options={"settings": "tool_initiative_reactive", "categories": "toolbox"},
    )
    bench = create_benchmark(config)
    assert isinstance(bench, PrefixBenchmark)
    user_spec = bench.users(1, 0)[0]
    assert {s.id.split("_")[-2] for s in bench.sessions(user_spec, 3, seed=0)} == {"toolbox"}
    spec = SessionSpec(id=task.id, user_id=user_spec.id, index=0, task=PrefixTask(task_id=task.id))
    models = ModelRoles(
        {"agent": _agent(task), "user": ScriptedAPI(responder=user), "judge": judge}
    )
    condition = Condition(name="no_p+none", memory="none", settings={"prompting": "no_p"})
    record = await play_session(
        bench, spec, user_spec, models=models, memory=BaseMemory(models), condition=condition
    )
    assert record.scores["bfcl_pass"] == 1.0 and record.scores["accuracy"] == 1.0
    assert record.scores["align_recall"] == 1.0 and record.scores["align_precision"] == 1.0
