"""Call parsing and the release loader, on a tiny release written here in its layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.envs.mpt import (
    CallParseError,
    MPTBenchmark,
    MPTOptions,
    ReleaseLayoutError,
    load_release,
    parse_call,
    scenario_counts,
)

from .release_fixture import EXAMPLES, EXPECTED, SCHEMA_SINGLE, write_release


def test_parse_call_reads_keyword_literals() -> None:
    call = parse_call('Func(a="v", n=2, ok=True, xs=[1, 2])')
    assert call == {"name": "Func", "arguments": {"a": "v", "n": 2, "ok": True, "xs": [1, 2]}}


@pytest.mark.parametrize(
    "text",
    [
        '__import__("os").system("x")',
        'Func(a=open("f"))',
        "Func(1)",
        "Func(**k)",
        "1 + 2",
        "Func(",
        'Func(a="x", a="y")',
        "Func(a={[1]: 2})",
        "Func(a={{}})",
        "Func(a=" + "-" * 10_000 + "1)",
        # Literals a stored (JSON) call cannot hold.
        "Func(a=b'x')",
        "Func(a={1, 2})",
        "Func(a=1j)",
        "Func(a=...)",
        "Func(a={1: 'x'})",
    ],
)
def test_parse_call_rejects_anything_but_literal_keywords(text: str) -> None:
    with pytest.raises(CallParseError):
        parse_call(text)


def test_counts_per_turn_and_difficulty_equal_the_release_rules(tmp_path: Path) -> None:
    users = load_release(write_release(tmp_path), "tiny-v1")
    assert scenario_counts(users) == EXPECTED
    labels = {(i["challenge"], i["query_type"]) for u in users for i in u["instances"]}
    assert labels == {
        (c, q) for c in ("recall", "induction", "transfer") for q in ("single-turn", "multi-turn")
    }


def test_gold_calls_are_the_product_of_allowed_values(tmp_path: Path) -> None:
    users = load_release(write_release(tmp_path), "tiny-v1")
    hotel = next(
        i
        for i in users[0]["instances"]
        if i["domain"] == "GetHotels" and i["query_type"] == "multi-turn"
    )
    assert hotel["allowed"] == {"location": ["Vallejo"], "average_star": ["1", "2"]}
    assert [c["arguments"]["average_star"] for c in hotel["gold_calls"]] == ["1", "2"]
    assert hotel["pref_slots"] == ["average_star"]
    assert hotel["difficulty"] == "hard" and hotel["challenge"] == "transfer"
    assert len(hotel["functions"]) == 3  # the agent sees every function and chooses one


def test_a_duplicated_keyword_is_an_error_recorded_for_its_example(tmp_path: Path) -> None:
    users = load_release(write_release(tmp_path), "tiny-v1")
    [error] = users[1]["errors"]
    assert "given twice" in error
    assert [i["domain"] for i in users[1]["instances"]] == ["GetRentalCars"]
    assert error in users[1]["instances"][0]["notes"]


def test_history_sessions_are_named_by_their_function(tmp_path: Path) -> None:
    users = load_release(write_release(tmp_path), "tiny-v1")
    assert [s["domain"] for s in users[0]["history"]] == ["GetRestaurants", "chat"]


def test_a_replacement_data_file_skips_the_count_check_with_a_note(tmp_path: Path) -> None:
    root = write_release(tmp_path / "release")
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps(EXAMPLES[:1]))
    users = load_release(root, "tiny-v1", subset)
    assert len(users) == 1
    assert any("not checked" in n for n in users[0]["instances"][0]["notes"])


def test_the_source_given_as_data_is_still_checked(tmp_path: Path) -> None:
    root = write_release(tmp_path / "release")
    config = root / "configs/datasets/tiny-v1.json"
    data = json.loads(config.read_text())
    data["expected"]["total_instances"] = 99
    config.write_text(json.dumps(data))
    with pytest.raises(ReleaseLayoutError, match="total: 8 != 99"):
        load_release(root, "tiny-v1", root / "data/tiny.json")


def test_counts_that_differ_from_expected_fail(tmp_path: Path) -> None:
    root = write_release(tmp_path)
    config = root / "configs/datasets/tiny-v1.json"
    data = json.loads(config.read_text())
    data["expected"]["scenarios"]["singleturn.easy"]["count"] = 5
    config.write_text(json.dumps(data))
    with pytest.raises(ReleaseLayoutError, match=r"singleturn.easy: 2 != 5"):
        load_release(root, "tiny-v1")


def test_changed_inputs_are_noted_and_not_count_checked(tmp_path: Path) -> None:
    root = write_release(tmp_path)
    (root / "configs/preferences/tiny-v1/pref_list.json").write_text(json.dumps({}))
    users = load_release(root, "tiny-v1")
    notes = users[0]["instances"][0]["notes"] if users[0]["instances"] else []
    assert not notes or any("pref_list" in n for n in notes)


def _config(root: Path, **changes: object) -> None:
    path = root / "configs/datasets/tiny-v1.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _rows(root: Path, rows: list[object]) -> None:
    (root / "data/tiny.json").write_text(json.dumps(rows))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda r: (r / "configs/datasets/tiny-v1.json").unlink(), "missing dataset config"),
        (lambda r: (r / "data/tiny.json").write_text('{"a": 1}'), "JSON list of examples"),
        (
            lambda r: (r / "data/tiny.json").write_text('[{"query": "hi"}]'),
            "has no 'example_id' and no 'sessions'",
        ),
        (
            lambda r: (r / "configs/queries/tiny-v1.json").write_text("{}"),
            "queries_config has no 'inputs'",
        ),
        (lambda r: _config(r, source="data/tiny.json"), "'source' must be a JSON object"),
        (lambda r: _config(r, turns=3), "'turns' must be a JSON list"),
        (lambda r: _config(r, expected=[]), "'expected' must be a JSON object"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "sessions": None}]), "'sessions' must be"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "sessions": ["x"]}]), "session 0 must be"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "api_calls": 3}]), "'api_calls' must be"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "example_id": {}}]), "'example_id' must be"),
        (lambda r: _rows(r, [EXAMPLES[0], EXAMPLES[0]]), "repeats example_id"),
        (
            lambda r: _rows(r, [{**EXAMPLES[0], "api_calls_pref": [{"evidence": ["x"]}]}]),
            "evidence 0 must be a JSON object",
        ),
        (
            lambda r: (r / "configs/preferences/tiny-v1/pref_list.json").write_text("[]"),
            "pref_list must be a JSON object",
        ),
        (
            lambda r: (r / "configs/schemas/tiny-v1/schema_easy.json").write_text("{}"),
            "schemas_config.singleturn must be a JSON list",
        ),
        (
            lambda r: (r / "configs/queries/tiny-v1/query_multiturn.json").write_text(
                json.dumps([{"target": [{"domain": "GetHotels"}], "query": "hi"}])
            ),
            "'query' must be a JSON list",
        ),
        (lambda r: (r / "data/tiny.json").write_bytes(b"\xff\xfe[]"), "data is not JSON"),
        # Values the builder would turn into text (or crash on), and files that build nothing.
        (lambda r: _rows(r, []), "holds no examples"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "example_id": True}]), "'example_id' must be"),
        (lambda r: _rows(r, [{**EXAMPLES[0], "example_id": " "}]), "'example_id' is empty"),
        (
            lambda r: (r / "data/tiny.json").write_text(
                '[{"example_id": "a", "example_id": "b", "sessions": []}]'
            ),
            "repeats the key 'example_id'",
        ),
        (
            lambda r: (r / "data/tiny.json").write_text(
                '[{"example_id": ' + "9" * 5000 + ', "sessions": []}]'
            ),
            "source data is not JSON",
        ),
        (
            lambda r: _rows(r, [{**EXAMPLES[0], "sessions": [{"api_call": [1]}]}]),
            "'api_call' entry 0 must be a JSON string",
        ),
        (
            lambda r: _rows(
                r, [{**EXAMPLES[0], "sessions": [{"dialogue": [{"message": ["hi"]}]}]}]
            ),
            "'message' must be a JSON string",
        ),
        (
            lambda r: _rows(r, [{**EXAMPLES[0], "sessions": [{"dialogue_id": [1]}]}]),
            "'dialogue_id' must be",
        ),
        (
            lambda r: _rows(r, [{**EXAMPLES[0], "sessions": [{"preference_utterance": 5}]}]),
            "'preference_utterance' must be",
        ),
        (lambda r: _rows(r, [{**EXAMPLES[0], "api_calls": [None]}]), "api_calls entry 0"),
        (
            lambda r: _rows(
                r,
                [
                    {
                        **EXAMPLES[0],
                        "api_calls_pref": [
                            {"value_group": "low_cost", "evidence": [{"domain": ["GetHotels"]}]}
                        ],
                    }
                ],
            ),
            "evidence 0 'domain' must be a JSON string",
        ),
        (
            lambda r: _rows(r, [{**EXAMPLES[0], "api_calls_pref": [{"value_group": ["x"]}]}]),
            "'value_group' must be a JSON string",
        ),
        (lambda r: _config(r, turns=[["singleturn"]]), "'turns' entry 0 must be a JSON string"),
        (lambda r: _config(r, difficulties=["easy", "harder"]), "names 'harder'"),
        (lambda r: _config(r, dataset_id=["tiny"]), "'dataset_id' must be a JSON string"),
        (
            lambda r: (r / "configs/queries/tiny-v1/query_singleturn.json").write_text(
                json.dumps({"GetHotels": ["Find me a hotel."]})
            ),
            "singleturn's 'GetHotels' must be a JSON string",
        ),
        (
            lambda r: (r / "configs/queries/tiny-v1/query_multiturn.json").write_text(
                json.dumps({"GetHotels": [3]})
            ),
            "'GetHotels' template 0 must be a JSON object",
        ),
        (
            lambda r: (r / "configs/queries/tiny-v1/query_multiturn.json").write_text(
                json.dumps([{"target": [{"domain": "GetHotels", "slot": ["a"]}], "query": []}])
            ),
            "'slot' must be a JSON string",
        ),
        (
            lambda r: (r / "configs/preferences/tiny-v1/pref_list.json").write_text(
                json.dumps({"GetHotels": [["average_star"]]})
            ),
            "pref_list's 'GetHotels' entry 0",
        ),
        (
            lambda r: (r / "configs/preferences/tiny-v1/pref_group.json").write_text(
                json.dumps({"low_cost": {"rules": [{"domain": ["GetHotels"], "slot": "x"}]}})
            ),
            "rules entry 0 'domain' must be a JSON string",
        ),
        (
            lambda r: (r / "configs/schemas/tiny-v1/schema_easy.json").write_text("[3]"),
            "schemas_config.singleturn entry 0 must be a JSON object",
        ),
        (
            lambda r: (r / "configs/schemas/tiny-v1/schema_easy.json").write_text(
                json.dumps([{"function": {"name": ["GetHotels"]}}])
            ),
            "has no function 'name' string",
        ),
        (
            lambda r: (r / "configs/schemas/tiny-v1/schema_easy.json").write_text(
                json.dumps([{"function": {"name": "GetHotels", "parameters": [1]}}])
            ),
            "'parameters' must be a JSON object",
        ),
        (
            lambda r: (r / "configs/schemas/tiny-v1/schema_easy.json").write_text(
                json.dumps(SCHEMA_SINGLE[1:])
            ),
            "schemas_config.singleturn has no function 'GetRestaurants'",
        ),
    ],
)
def test_another_layout_fails_in_one_line(tmp_path: Path, damage, message: str) -> None:  # type: ignore[no-untyped-def]
    root = write_release(tmp_path)
    damage(root)
    with pytest.raises(ReleaseLayoutError, match=message) as info:
        load_release(root, "tiny-v1")
    assert "\n" not in str(info.value)


def test_the_benchmark_runs_on_the_release(tmp_path: Path) -> None:
    bench = MPTBenchmark(MPTOptions(release=str(write_release(tmp_path)), dataset="tiny-v1"))
    users = bench.users(2, 0)
    specs = bench.sessions(users[0], 1, 0)
    assert [s.split for s in specs] == ["train", "train"] + ["eval"] * 7


def test_the_cli_refuses_another_layout_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rapport.cli import main

    root = write_release(tmp_path / "release")
    (root / "data/tiny.json").write_text(json.dumps([{"example_id": "x", "query": "hi"}]))
    argv = ["run", "mpt", "--release", str(root), "--dataset", "tiny-v1"]
    argv += ["--model", "all=scripted/echo", "--run-dir", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no 'sessions'" in err[0]
    assert not (tmp_path / "r").exists()


def _schema(root: Path, functions: list[object]) -> None:
    (root / "configs/schemas/tiny-v1/schema_easy.json").write_text(json.dumps(functions))


def _group(root: Path, rules: list[object]) -> None:
    path = root / "configs/preferences/tiny-v1/pref_group.json"
    path.write_text(json.dumps({"low_cost": {"rules": rules}}))


_EVIDENCE = [{"value_group": "low_cost", "evidence": [{"domain": ["GetRestaurants"]}]}]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda r: _rows(r, [{**EXAMPLES[0], "api_calls_pref": _EVIDENCE}]), "'domain' must be"),
        (lambda r: _config(r, turns=[["singleturn"]]), "'turns' entry 0 must be"),
        (lambda r: _schema(r, [{"function": {"name": ["GetHotels"]}}]), "no function 'name'"),
        (lambda r: _group(r, [{"domain": ["GetHotels"], "slot": "average_star"}]), "'domain'"),
    ],
)
def test_the_cli_refuses_values_the_builder_crashed_on(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage,
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    from rapport.cli import main

    root = write_release(tmp_path / "release")
    damage(root)
    argv = ["run", "mpt", "--release", str(root), "--dataset", "tiny-v1", "--users", "1"]
    argv += ["--model", "all=scripted/echo", "--run-dir", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rapport: release layout: ") and message in err[0]
    assert not (tmp_path / "r").exists()


def test_a_byte_order_mark_is_read_as_utf_8(tmp_path: Path) -> None:
    root = write_release(tmp_path)
    config = root / "configs/datasets/tiny-v1.json"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    assert scenario_counts(load_release(root, "tiny-v1")) == EXPECTED


@pytest.mark.parametrize("option", [{"data": "rows.json"}, {"dataset": "tiny-v1"}])
def test_release_options_without_a_release_are_refused(option: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="give release too"):
        MPTOptions.model_validate(option)
