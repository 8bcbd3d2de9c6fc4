"""Task data from a folder or a wheel (``--task-data``), BFCL v3 or v4, and the paper's fixed
coarsened tasks (``--coarsened``), on our own records in the layout of the published files
(data/published/README.md). Bad data is refused with one line and exit 2, before a run dir
exists.

Set ``RAPPORT_BFCL_V3`` to bfcl-eval 2025.6.8's wheel (or its ``bfcl_eval/data`` folder) to
also replay the ground truth of all 800 BFCL v3 tasks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")

from rapport.cli import main
from rapport.envs.prefix import (
    BfclTask,
    PrefixOutcome,
    SafeExecutor,
    TaskDataError,
    check_accuracy,
    get_setting,
    installed_task_data,
    open_paper_tasks,
    open_task_data,
    replay_turns,
    rubric_from,
)
from rapport.envs.prefix._task_data import installed_version
from rapport.log import JudgeEvent
from rapport.store import RunStore

PUBLISHED = Path(__file__).parent / "data" / "published"
V3 = PUBLISHED / "bfcl_v3"
PREFIX = PUBLISHED / "PrefIX"
CATEGORIES = ["base", "miss_param", "miss_func", "long_context"]
DOCS_NOTE = f" (function docs from the installed bfcl-eval {installed_version()})"
COMPACT = "BFCL_v3_multi_turn_long_context_rewrite_filled_presentation_compact.json"
UPFRONT = "BFCL_v3_multi_turn_miss_param_rewrite_filled_info_collect_upfront.json"


def _copy(tmp: Path) -> Path:
    """A writable copy of the v3 records."""
    return Path(shutil.copytree(V3, tmp / "bfcl_v3"))


def _wheel(folder: Path, path: Path) -> Path:
    """A wheel-like zip holding `folder` as ``bfcl_eval/data/``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, f"bfcl_eval/data/{file.relative_to(folder).as_posix()}")
    return path


# --- reading -------------------------------------------------------------------------------


def test_the_published_v3_folder_is_read_as_v3_with_its_ground_truth() -> None:
    data = open_task_data(V3)
    assert data.version == "v3" and data.categories == CATEGORIES
    assert data.label == "BFCL v3 from folder bfcl_v3" + DOCS_NOTE
    base = data.tasks("base")
    assert [t.id for t in base] == [f"multi_turn_base_{i}" for i in range(3)]
    first = base[0]
    assert first.bfcl_version == "v3" and first.category == "base"
    assert first.involved_classes == ["TwitterAPI", "GorillaFileSystem"]
    assert first.turns[0].startswith("In the notes folder, make a new folder called 'review'")
    assert first.ground_truth[0] == [
        "cd(folder='notes')",
        "mkdir(dir_name='review')",
        "mv(source='draft_plan.txt', destination='review')",
    ]
    missed = data.task("multi_turn_miss_func_0")
    assert missed.missed_functions == {3: ["sort"]} and missed.turns[3] == ""


def test_a_wheel_is_read_in_place_and_named_by_its_file(tmp_path: Path) -> None:
    wheel = _wheel(V3, tmp_path / "bfcl_eval-2025.6.8-py3-none-any.whl")
    data = open_task_data(wheel)
    assert data.version == "v3" and data.categories == CATEGORIES
    assert data.label == "BFCL v3 from bfcl_eval-2025.6.8-py3-none-any.whl" + DOCS_NOTE
    folder = open_task_data(V3)
    for category in CATEGORIES:
        assert data.tasks(category) == folder.tasks(category)  # type: ignore[arg-type]


def test_the_installed_data_is_v4_and_says_so() -> None:
    data = installed_task_data()
    assert data.version == "v4" and data.categories == CATEGORIES
    assert data.label == f"bfcl-eval {installed_version()} (installed, v4)"
    assert open_task_data(None) is data
    assert all(len(data.tasks(c)) == 200 for c in CATEGORIES)  # type: ignore[arg-type]


def test_v4_file_names_are_read_as_v4(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    for file in [*folder.glob("*.json"), *folder.glob("possible_answer/*.json")]:
        file.rename(file.with_name(file.name.replace("BFCL_v3", "BFCL_v4")))
    data = open_task_data(folder)
    assert data.version == "v4" and data.label.startswith("BFCL v4 from folder bfcl_v3")
    assert all(t.bfcl_version == "v4" for t in data.tasks("base"))


def test_function_docs_come_from_the_data_when_it_has_them(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    docs = folder / "multi_turn_func_doc"
    shutil.copytree(_installed_docs(), docs)
    ticket = docs / "ticket_api.json"
    rows = [json.loads(line) for line in ticket.read_text().splitlines() if line.strip()]
    rows[0]["description"] = "Tool description: read from the task data."
    ticket.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    data = open_task_data(folder)
    assert data.label == "BFCL v3 from folder bfcl_v3"
    tools = {t.name: t for t in data.tools(data.task("multi_turn_base_2"))}
    assert tools[rows[0]["name"]].description == "read from the task data."


def _installed_docs() -> Path:
    from rapport.envs.prefix._tasks import data_dir

    return data_dir() / "multi_turn_func_doc"


def test_a_leading_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    file = folder / "BFCL_v3_multi_turn_base.json"
    file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    assert len(open_task_data(folder).tasks("base")) == 3


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_records_ground_truth_replays_to_full_accuracy(category: str) -> None:
    for task in open_task_data(V3).tasks(category):  # type: ignore[arg-type]
        trial = replay_turns(task, task.ground_truth)
        assert not any(c.refused or c.error for c in trial.log), task.id
        assert check_accuracy(task, trial).success, task.id


@pytest.mark.skipif(
    not os.environ.get("RAPPORT_BFCL_V3"),
    reason="RAPPORT_BFCL_V3 names no BFCL v3 wheel or data folder",
)
@pytest.mark.parametrize("category", CATEGORIES)
def test_v3_ground_truth_replays_to_full_accuracy(category: str) -> None:
    data = open_task_data(os.environ["RAPPORT_BFCL_V3"])
    assert data.version == "v3"
    tasks = data.tasks(category)  # type: ignore[arg-type]
    assert len(tasks) == 200
    for task in tasks:
        trial = replay_turns(task, task.ground_truth)
        # No reference call is missing from the backends or raises on them: a pass is not
        # a reference that fails the same way as the trial.
        assert not any(c.refused or c.error for c in trial.log), task.id
        result = check_accuracy(task, trial)
        assert result.success and result.coverage == 1.0, task.id


# --- BFCL v3's backend API -----------------------------------------------------------------


LOGGED_IN = {"TradingBot": {"authenticated": True}}


def _task(
    version: str, classes: list[str], calls: list[str], config: dict | None = None
) -> BfclTask:
    return BfclTask(
        id="multi_turn_base_900",
        category="base",
        turns=["go"],
        initial_config=config or {},
        involved_classes=classes,
        ground_truth=[calls],
        bfcl_version=version,  # type: ignore[arg-type]
    )


def test_v3_tasks_get_the_v3_trading_functions_and_not_the_later_ones() -> None:
    calls = [
        "update_market_status(current_time_str='10:30 AM')",
        "make_transaction(account_id=12345, xact_type='withdrawal', amount=500)",
        "update_stock_price(symbol='AAPL', new_price=300.0)",
        "withdraw_funds(amount=10)",
    ]
    v3 = SafeExecutor(_task("v3", ["TradingBot"], calls, LOGGED_IN))
    status, withdrawal, price, later = [v3.run(c) for c in calls]
    assert json.loads(status.result) == {"status": "Open"}
    assert json.loads(withdrawal.result)["status"] == "Withdrawal successful"
    assert json.loads(price.result)["new_price"] == 300.0
    assert later.refused
    v4 = SafeExecutor(_task("v4", ["TradingBot"], calls, LOGGED_IN))
    assert [v4.run(c).refused for c in calls] == [True, True, True, False]


def test_v3_takes_a_buy_order_over_the_balance_and_later_versions_refuse_it() -> None:
    call = "place_order(order_type='Buy', symbol='AAPL', price=700.0, amount=100)"
    v3 = SafeExecutor(_task("v3", ["TradingBot"], [call], LOGGED_IN)).run(call)
    v4 = SafeExecutor(_task("v4", ["TradingBot"], [call], LOGGED_IN)).run(call)
    assert json.loads(v3.result)["status"] == "Pending"
    assert "Insufficient funds" in json.loads(v4.result)["error"]


def test_v3_books_a_flight_at_the_stated_cost() -> None:
    call = (
        "book_flight(access_token='abc123', card_id='card_3456', travel_date='2024-12-15', "
        "travel_from='SFO', travel_to='LAX', travel_class='economy', travel_cost=320.0)"
    )
    account = {
        "credit_card_list": {"card_3456": {"balance": 1000.0}},
        "access_token": "abc123",
        "token_expires_in": 3,
    }
    task = _task("v3", ["TravelAPI"], [call], {"TravelAPI": account})
    executor = SafeExecutor(task)
    booked = json.loads(executor.run(call).result)
    assert booked["booking_status"] is True
    assert executor.instances["TravelAPI"].credit_card_list["card_3456"]["balance"] == 680.0
    assert "get_booking_history" not in executor.methods
    later = SafeExecutor(task.model_copy(update={"bfcl_version": "v4"})).run(call)
    assert "unexpected keyword argument 'travel_cost'" in (later.error or "")


def test_v3_echo_into_a_new_file_creates_it() -> None:
    calls = ["echo(content='hello', file_name='new.txt')", "cat(file_name='new.txt')"]
    v3 = SafeExecutor(_task("v3", ["GorillaFileSystem"], calls))
    assert json.loads([v3.run(c) for c in calls][1].result) == {"file_content": "hello"}
    v4 = SafeExecutor(_task("v4", ["GorillaFileSystem"], calls))
    assert "No such file" in v4.run(calls[0]).result


# --- the paper's fixed tasks ---------------------------------------------------------------


def test_fixed_tasks_are_matched_to_v3_tasks_by_id_with_their_instruction() -> None:
    data = open_task_data(V3)
    paper = open_paper_tasks(PREFIX, data)
    assert open_paper_tasks(PREFIX / "Processing", data) is paper
    compact = paper.for_setting("presentation_compact", ["long_context"])
    assert compact is not None and compact.file == f"Processing/{COMPACT}"
    first = compact.tasks[0]
    row = json.loads((PREFIX / "Processing" / COMPACT).read_text().splitlines()[0])
    assert first.instruction == row["high_level_instruction"]
    assert first.task.id == "multi_turn_long_context_0"
    assert first.task.ground_truth == data.task("multi_turn_long_context_0").ground_truth
    assert first.task.initial_config == row["initial_config"]
    upfront = paper.for_setting("info_collect_upfront", ["miss_param"])
    assert upfront is not None and [t.task.id for t in upfront.tasks] == [
        "multi_turn_miss_param_0",
        "multi_turn_miss_param_1",
    ]
    assert paper.for_setting("info_collect_upfront", ["long_context"]) is None
    assert paper.for_setting("tool_low", ["long_context"]) is None


# --- through the command line --------------------------------------------------------------

RUN = ["run", "prefix", "--tasks", "1", "--model", "all=scripted/auto", "--no-progress"]


def _run(tmp: Path, *extra: str) -> list[str]:
    return [*RUN, "--run-dir", str(tmp / "run"), *extra]


def test_a_scripted_run_on_v3_data_and_fixed_tasks_reports_where_each_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = "presentation_compact,info_collect_upfront,tool_low"
    argv = _run(tmp_path, "--settings", settings, "--condition", "p")
    argv += ["--task-data", str(V3), "--coarsened", str(PREFIX)]
    assert main(argv) == 0
    report = capsys.readouterr().out
    label = "BFCL v3 from folder bfcl_v3" + DOCS_NOTE
    table = report.split("PrefIx: task data, instructions, judge rubric and call matching", 1)[1]
    rows = {line.split()[0]: line for line in table.splitlines()[3:] if line.strip()}
    assert f"{label}  PrefIX fixed tasks (Processing/{COMPACT})" in rows["presentation_compact"]
    assert f"{label}  PrefIX fixed tasks (Processing/{UPFRONT})" in rows["info_collect_upfront"]
    assert f"{label}  coarsened by the user model" in rows["tool_low"]
    with RunStore.open_readonly(tmp_path / "run") as store:
        outcomes = {r.user_id: r.outcome for r in store.sessions()}
    compact = outcomes["prefix-presentation_compact"]
    assert isinstance(compact, PrefixOutcome)
    fixed = {
        json.loads(line)["id"]: json.loads(line)["high_level_instruction"]
        for line in (PREFIX / "Processing" / COMPACT).read_text().splitlines()
    }
    assert compact.instruction == fixed[compact.task_id]


def _replace(name: str, old: str, new: str) -> Callable[[Path], str]:
    """Copy the records with one file's text changed; returns the folder."""

    def setup(tmp: Path) -> str:
        folder = _copy(tmp)
        file = folder / name
        text = file.read_text()
        assert old in text, old
        file.write_text(text.replace(old, new, 1))
        return str(folder)

    return setup


def _first_row(name: str, change: Callable[[dict], object]) -> Callable[[Path], str]:
    """Copy the records with the first row of one file changed by `change`."""

    def setup(tmp: Path) -> str:
        folder = _copy(tmp)
        file = folder / name
        lines = file.read_text().splitlines()
        row = json.loads(lines[0])
        change(row)
        lines[0] = json.dumps(row)
        file.write_text("\n".join(lines) + "\n")
        return str(folder)

    return setup


def _set(key: str, value: object) -> Callable[[dict], object]:
    return lambda row: row.__setitem__(key, value)


def _bytes(name: str, data: bytes) -> Callable[[Path], str]:
    def setup(tmp: Path) -> str:
        folder = _copy(tmp)
        (folder / name).write_bytes(data)
        return str(folder)

    return setup


def _only(*names: str) -> Callable[[Path], str]:
    def setup(tmp: Path) -> str:
        folder = _copy(tmp)
        for file in [*folder.glob("*.json"), *folder.glob("possible_answer/*.json")]:
            if not any(n in file.name for n in names):
                file.unlink()
        return str(folder)

    return setup


def _plain_file(tmp: Path) -> str:
    (tmp / "tasks.whl").write_text("not a wheel\n")
    return str(tmp / "tasks.whl")


def _broken_wheel(tmp: Path) -> str:
    path = _wheel(V3, tmp / "bfcl_eval-2025.6.8-py3-none-any.whl")
    data = bytearray(path.read_bytes())
    data[200:260] = b"\x00" * 60  # inside the first member's compressed bytes
    path.write_bytes(bytes(data))
    return str(path)


def _empty_wheel(tmp: Path) -> str:
    with zipfile.ZipFile(tmp / "empty.whl", "w") as archive:
        archive.writestr("bfcl_eval/__init__.py", "")
    return str(tmp / "empty.whl")


def _empty_folder(tmp: Path) -> str:
    (tmp / "empty").mkdir()
    return str(tmp / "empty")


def _both_versions(tmp: Path) -> str:
    folder = _copy(tmp)
    shutil.copy(folder / "BFCL_v3_multi_turn_base.json", folder / "BFCL_v4_multi_turn_base.json")
    return str(folder)


def _no_answers(tmp: Path) -> str:
    folder = _copy(tmp)
    (folder / "possible_answer" / "BFCL_v3_multi_turn_base.json").unlink()
    return str(folder)


def _docs_missing_one(tmp: Path) -> str:
    folder = _copy(tmp)
    shutil.copytree(_installed_docs(), folder / "multi_turn_func_doc")
    (folder / "multi_turn_func_doc" / "math_api.json").unlink()
    return str(folder)


Q = "BFCL_v3_multi_turn_base.json"
A = "possible_answer/BFCL_v3_multi_turn_base.json"

TASK_DATA_CASES: dict[str, tuple[Callable[[Path], str], str]] = {
    "missing": (lambda tmp: str(tmp / "nowhere"), "No such file"),
    "empty-path": (lambda tmp: "", "--task-data needs a value"),
    "plain-file": (_plain_file, "neither a folder nor a wheel"),
    "broken-wheel": (_broken_wheel, "cannot read it"),
    "wheel-without-data": (_empty_wheel, "holds no BFCL multi-turn files"),
    "empty-folder": (_empty_folder, "holds no BFCL multi-turn files"),
    "both-versions": (_both_versions, "both BFCL v3 and v4"),
    "no-ground-truth": (_no_answers, "has no ground truth"),
    "category-missing": (_only("base"), "holds no long_context tasks"),
    "not-utf8": (_bytes(Q, b"\xff\xfe{}\n"), "not UTF-8"),
    "not-json": (_bytes(Q, b'{"id": \n'), "not JSON"),
    "bom-inside": (_replace(Q, '\n{"id"', '\n\ufeff{"id"'), "line 2: not JSON"),
    "row-not-object": (_bytes(Q, b"[1, 2]\n"), "must be a JSON object"),
    "deep-nesting": (_bytes(Q, b"[" * 100_000 + b"]" * 100_000 + b"\n"), "nested too"),
    "nesting-over-limit": (
        _first_row(
            Q, _set("initial_config", {"TwitterAPI": json.loads('{"a":' * 45 + "1" + "}" * 45)})
        ),
        "nested deeper than",
    ),
    "id-not-text": (_first_row(Q, _set("id", 0)), "id must be"),
    "id-with-bom": (_first_row(Q, _set("id", "\ufeffmulti_turn_base_0")), "id must be"),
    "id-other-category": (_first_row(Q, _set("id", "multi_turn_miss_func_0")), "id must be"),
    "id-twice": (_replace(Q, "multi_turn_base_1", "multi_turn_base_0"), "appears twice"),
    "question-not-list": (_first_row(Q, _set("question", "Move the file")), "question must"),
    "question-empty": (_first_row(Q, _set("question", [])), "question must"),
    "message-not-text": (
        _first_row(Q, _set("question", [[{"role": "user", "content": 7}]] * 4)),
        "role and a text content",
    ),
    "first-turn-silent": (
        _first_row(Q, lambda r: r["question"].__setitem__(0, [])),
        "first question turn",
    ),
    "config-not-object": (_first_row(Q, _set("initial_config", [])), "initial_config must"),
    "config-does-not-load": (
        _first_row(Q, lambda r: r["initial_config"].__setitem__("GorillaFileSystem", {"root": []})),
        "multi_turn_base_0: initial_config does not load into its backends",
    ),
    "classes-empty": (_first_row(Q, _set("involved_classes", [])), "involved_classes must"),
    "classes-unknown": (_first_row(Q, _set("involved_classes", ["Shell"])), "unknown backend"),
    "classes-twice": (
        _first_row(Q, _set("involved_classes", ["TwitterAPI", "TwitterAPI"])),
        "names a class twice",
    ),
    "excluded-not-names": (_first_row(Q, _set("excluded_function", "cd")), "excluded_function"),
    "missed-bad-turn": (
        _first_row(Q, _set("missed_function", {"9": ["cd"]})),
        "missed_function turn",
    ),
    "truth-empty": (_first_row(A, _set("ground_truth", [])), "ground_truth must"),
    "truth-no-call": (_first_row(A, _set("ground_truth", [[], [], [], []])), "holds no call"),
    "truth-not-a-call": (
        _first_row(A, _set("ground_truth", [["cd(folder="], [], [], []])),
        "is not a call",
    ),
    "truth-not-strings": (_first_row(A, _set("ground_truth", [[1], [], [], []])), "call strings"),
    "truth-turns-differ": (_first_row(A, _set("ground_truth", [["ls()"]])), "turns of ground"),
    "truth-unknown-task": (
        _first_row(A, _set("id", "multi_turn_base_77")),
        "no ground truth for multi_turn_base_0",
    ),
    "docs-missing": (_docs_missing_one, "lacks math_api.json"),
}


def _fingerprint(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
        for p in sorted(root.rglob("*"))
    }


def _refused(tmp: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = _fingerprint(tmp)
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert needle in err[0], err[0]
    assert not (tmp / "run").exists()
    assert _fingerprint(tmp) == before


@pytest.mark.parametrize("case", sorted(TASK_DATA_CASES))
def test_bad_task_data_is_refused_in_one_line_before_anything_is_written(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup, needle = TASK_DATA_CASES[case]
    path = setup(tmp_path)
    argv = _run(tmp_path, "--settings", "tool_low", "--task-data", path)
    _refused(tmp_path, argv, needle, capsys)


def _prefix_copy(change: Callable[[list[str]], list[str]]) -> Callable[[Path], str]:
    """A copy of the PrefIX records with the compact file's lines changed."""

    def setup(tmp: Path) -> str:
        folder = Path(shutil.copytree(PREFIX, tmp / "PrefIX"))
        file = folder / "Processing" / COMPACT
        file.write_text("\n".join(change(file.read_text().splitlines())) + "\n")
        return str(folder)

    return setup


def _fixed_row(key: str, value: object) -> Callable[[Path], str]:
    def change(lines: list[str]) -> list[str]:
        row = json.loads(lines[0])
        row[key] = value
        return [json.dumps(row), *lines[1:]]

    return _prefix_copy(change)


def _no_fixed_files(tmp: Path) -> str:
    (tmp / "Processing").mkdir()
    (tmp / "Processing" / "Prompt_extractor.md").write_text("notes\n")
    return str(tmp)


COARSENED_CASES: dict[str, tuple[Callable[[Path], str], str | None, str]] = {
    "needs-v3": (lambda tmp: str(PREFIX), None, "needs --task-data with BFCL v3"),
    "v4-task-data": (lambda tmp: str(PREFIX), "v4", "needs --task-data with BFCL v3"),
    "missing": (lambda tmp: str(tmp / "nowhere"), "v3", "no such folder"),
    "empty-path": (lambda tmp: "", "v3", "--coarsened needs a value"),
    "a-file": (lambda tmp: str(PREFIX / "Processing" / COMPACT), "v3", "not a folder"),
    "no-files": (_no_fixed_files, "v3", "no fixed-task file"),
    "not-json": (_prefix_copy(lambda lines: ["{oops", *lines[1:]]), "v3", "not JSON"),
    "unknown-task": (_fixed_row("id", "multi_turn_long_context_150"), "v3", "is no task of"),
    "id-not-text": (_fixed_row("id", ["multi_turn_long_context_0"]), "v3", "id must be"),
    "instruction-empty": (_fixed_row("high_level_instruction", " "), "v3", "non-empty text"),
    "instruction-not-text": (_fixed_row("high_level_instruction", 3), "v3", "non-empty text"),
    "classes-differ": (_fixed_row("involved_classes", ["TicketAPI"]), "v3", "are not those"),
    "config-not-object": (_fixed_row("initial_config", "x"), "v3", "initial_config must"),
    "config-does-not-load": (
        _fixed_row("initial_config", {"GorillaFileSystem": {"root": "x"}}),
        "v3",
        "line 1: initial_config does not load into its backends",
    ),
    "path-not-names": (_fixed_row("path", "GorillaFileSystem.cd"), "v3", "path must be"),
    "twice": (_prefix_copy(lambda lines: [lines[0], lines[0]]), "v3", "appears twice"),
}


@pytest.mark.parametrize("case", sorted(COARSENED_CASES))
def test_bad_coarsened_tasks_are_refused_in_one_line_before_anything_is_written(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup, version, needle = COARSENED_CASES[case]
    path = setup(tmp_path)
    argv = _run(tmp_path, "--settings", "presentation_compact", "--coarsened", path)
    if version == "v3":
        argv += ["--task-data", str(V3)]
    elif version == "v4":
        argv += ["--task-data", _replace_names_v4(tmp_path)]
    _refused(tmp_path, argv, needle, capsys)


def _replace_names_v4(tmp: Path) -> str:
    folder = _copy(tmp / "v4")
    for file in [*folder.glob("*.json"), *folder.glob("possible_answer/*.json")]:
        file.rename(file.with_name(file.name.replace("BFCL_v3", "BFCL_v4")))
    return str(folder)


def test_task_data_errors_are_value_errors_with_one_line() -> None:
    with pytest.raises(TaskDataError, match=r"^task data /nowhere/at/all: ") as caught:
        open_task_data("/nowhere/at/all")
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


def test_a_scripted_run_with_the_rubric_from_a_prefix_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _run(tmp_path, "--settings", "tool_low", "--condition", "p")
    argv += ["--rubric-from", str(PREFIX)]
    assert main(argv) == 0
    report = capsys.readouterr().out
    table = report.split("PrefIx: task data, instructions, judge rubric and call matching", 1)[1]
    assert "PrefIX checkout (PrefIX)" in table
    with RunStore.open_readonly(tmp_path / "run") as store:
        records = store.sessions()
    assert records and all(r.status == "ok" for r in records)
    judged = {e.dimension for r in records for e in r.events_of(JudgeEvent)}
    experience = {
        "initiative_timing",
        "interaction_coherence",
        "intent_alignment_drift",
        "commitment_consistency",
        "interaction_efficiency",
        "user_cognitive_load_trajectory",
        "overall_user_experience",
    }
    assert judged == experience | {"interaction_preference_alignment"}
    scores = records[0].scores
    assert "alignment" in scores and "ux" in scores
    assert scores["ux"] == pytest.approx(sum(scores[f"ux.{d}"] for d in experience) / 7)


def test_a_rubric_path_without_the_judge_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _run(tmp_path, "--settings", "tool_low", "--rubric-from", str(tmp_path))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--rubric-from: no openrouter_judge.py" in err[0]
    assert not (tmp_path / "run").exists()


def test_the_rubric_instructions_name_the_persona_from_the_checkout() -> None:
    rubric = rubric_from(PREFIX)
    assert [d.id for d in rubric.dimensions][1] == "interaction_preference_alignment"
    text = rubric.instructions([get_setting("tool_low")])
    assert "Who the person is:\ntool_low\n" in text
    assert "What they want from an assistant:\nFixture: a user who wants few tool notices" in text
    assert "{{" not in text
