import csv
import json
import os
import re
import sys
from pathlib import Path

import pytest

from rapport.envs.collab import Problem, ProblemSourceError, is_correct, load_problems


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_mmlu_csv_without_header(tmp_path: Path) -> None:
    path = tmp_path / "astronomy_test.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Which planet is largest?", "Mars", "Jupiter", "Venus", "Earth", "B"])
        writer.writerow(["What is 2+2, written out?", "three", "five", "four", "two", "C"])
    problems = load_problems(str(path), 2, seed=0)
    by_question = {p.question: p for p in problems}
    planet = by_question["Which planet is largest?"]
    assert planet.kind == "choice" and planet.choices[1] == "Jupiter" and planet.answer == "B"
    assert is_correct(planet, "Answer: B") and not is_correct(planet, "Answer: A")


def test_mmlu_hf_json_with_answer_index(tmp_path: Path) -> None:
    rows = [{"question": "Q1", "subject": "x", "choices": ["a", "b", "c", "d"], "answer": 3}]
    path = tmp_path / "mmlu.json"
    path.write_text(json.dumps(rows))
    (problem,) = load_problems(str(path), 1, seed=0)
    assert problem.answer == "D" and problem.choices == ["a", "b", "c", "d"]


def test_mmlu_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {"question": ["Q1", "Q2"], "choices": [["a", "b", "c", "d"]] * 2, "answer": [0, 2]}
    )
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(table, path)
    problems = sorted(load_problems(str(path), 2, seed=0), key=lambda p: p.question)
    assert [p.answer for p in problems] == ["A", "C"]


def test_logiqa_json_and_txt(tmp_path: Path) -> None:
    rows = [
        {
            "context": "All cats purr.",
            "query": "What follows?",
            "options": ["w", "x", "y", "z"],
            "correct_option": 2,
        }
    ]
    (from_json,) = load_problems(str(write_jsonl(tmp_path / "logiqa.jsonl", rows)), 1, 0)
    assert from_json.answer == "C" and "All cats purr." in from_json.question
    assert "What follows?" in from_json.question
    text = "b\nSome context sentence.\nWhich is right?\nA. first\nB. second\nC. third\nD. fourth\n"
    txt = tmp_path / "Test.txt"
    txt.write_text(text + "\n" + text.replace("b\n", "d\n", 1))
    problems = load_problems(str(txt), 2, seed=0)
    assert sorted(p.answer for p in problems) == ["B", "D"]
    assert problems[0].choices == ["first", "second", "third", "fourth"]


def test_medqa_jsonl(tmp_path: Path) -> None:
    rows = [
        {
            "question": "A 30-year-old ...",
            "answer": "Aspirin",
            "options": {"A": "Ibuprofen", "B": "Aspirin", "C": "Heparin", "D": "Warfarin"},
            "meta_info": "step1",
            "answer_idx": "B",
        }
    ]
    (problem,) = load_problems(str(write_jsonl(tmp_path / "test.jsonl", rows)), 1, 0)
    assert problem.answer == "B" and problem.choices[1] == "Aspirin"
    assert is_correct(problem, "I would give aspirin, so (B).")


def test_math_hard_boxed_solution_and_level(tmp_path: Path) -> None:
    rows = [
        {
            "problem": "Compute 1/2 + 1/4.",
            "solution": "We add: $\\boxed{\\frac{3}{4}}$.",
            "level": "Level 5",
            "type": "Algebra",
        },
        {"problem": "What is 6*7?", "answer": "42", "level": "Level 5"},
    ]
    problems = load_problems(str(write_jsonl(tmp_path / "math_hard.jsonl", rows)), 2, 0)
    by_question = {p.question: p for p in problems}
    fraction = by_question["Compute 1/2 + 1/4."]
    assert fraction.answer == "\\frac{3}{4}" and fraction.kind == "math"
    assert is_correct(fraction, "The answer is 0.75") and not is_correct(fraction, "0.5")
    assert is_correct(by_question["What is 6*7?"], "It is 42.")


def test_directory_of_files(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write_jsonl(tmp_path / f"{name}.jsonl", [{"problem": f"P{name}", "answer": "1"}])
    assert len(load_problems(str(tmp_path), 2, seed=0)) == 2


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.json", "{not json", "broken.json: cannot read"),
        ("odd.jsonl", json.dumps({"title": "x", "body": "y"}), "unknown layout"),
        ("rows.csv", "a,b\nc,d\n", "expected MMLU rows"),
        ("bad.jsonl", json.dumps({"question": "q", "choices": ["a"], "answer": 4}), "row 0"),
        ("notes.md", "hello", "unsupported file type"),
        ("junk.txt", "hello there\nnot logiqa", "not the LogiQA text layout"),
        ("str.jsonl", json.dumps({"question": "q", "choices": "ab", "answer": 1}), "a list"),
        ("str.jsonl", json.dumps({"query": "q", "options": "abcd", "correct_option": "A"}), "list"),
        ("obj.jsonl", json.dumps({"problem": {"a": 1}, "answer": "2"}), "must be text"),
        ("inf.jsonl", '{"query": "q", "choices": ["(A)a", "(B)b"], "gold": 1e400}', "bad gold"),
        ("huge.jsonl", '{"query": "q", "choices": ["a", "b"], "gold": [1e308, 2]}', "row 0"),
        # Values that str() would turn into text the benchmark then shows as a problem.
        (
            "nested.jsonl",
            json.dumps({"question": "q", "choices": [["a"], "b"], "answer": 0}),
            "'choices' item 0 must be text",
        ),
        (
            "one.jsonl",
            json.dumps({"question": "q", "choices": ["a"], "answer": 0}),
            "2 or more choices",
        ),
        (
            "blank.jsonl",
            json.dumps({"question": " ", "choices": ["a", "b"], "answer": 0}),
            "'question' is empty",
        ),
        (
            "long.jsonl",
            json.dumps({"question": "x" * 20_001, "choices": ["a", "b"], "answer": 0}),
            "over 20000 characters",
        ),
        (
            "id.jsonl",
            json.dumps({"question": "q", "choices": ["a", "b"], "answer": 0, "id": [1]}),
            "'id' must be",
        ),
        ("answer.jsonl", json.dumps({"problem": "p", "answer": [1]}), "'answer' must be text"),
        (
            "solution.jsonl",
            json.dumps({"problem": "p", "solution": ["\\boxed{1}"]}),
            "'solution' must be text",
        ),
        ("empty.jsonl", json.dumps({"problem": "", "answer": "1"}), "'problem' is empty"),
        (
            "medqa.jsonl",
            json.dumps({"question": "q", "options": {"A": ["x"], "B": "y"}, "answer_idx": "B"}),
            "option 'A' must be text",
        ),
    ],
)
def test_bad_files_give_one_clear_error(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ProblemSourceError, match=message) as info:
        load_problems(str(path), 1, seed=0)
    assert name in str(info.value)


@pytest.mark.parametrize("name", ["p.json", "p.jsonl", "p.csv"])
def test_a_byte_order_mark_is_read_as_utf_8(tmp_path: Path, name: str) -> None:
    text = {
        "p.json": json.dumps([{"problem": "1+1", "answer": "2"}]),
        "p.jsonl": json.dumps({"problem": "1+1", "answer": "2"}) + "\n",
        "p.csv": "question,a,b,c,d,answer\n1+1,1,2,3,4,B\n",
    }[name]
    (tmp_path / name).write_text("\ufeff" + text, encoding="utf-8")
    assert [p.answer for p in load_problems(str(tmp_path / name), 1, seed=0)] in (["2"], ["B"])


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(ProblemSourceError, match="not a regular file"):
        load_problems(str(tmp_path / "pipe.jsonl"), 1, seed=0)


def test_parquet_without_pyarrow_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "test.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ProblemSourceError, match="pip install pyarrow"):
        load_problems(str(path), 1, seed=0)


def test_problem_prompt_letters_the_options() -> None:
    (problem,) = load_problems("generated:logic", 1, seed=0)
    prompt = problem.prompt()
    assert problem.question in prompt
    for letter, option in zip("ABCD", problem.choices, strict=True):
        assert f"{letter}. {option}" in prompt


MSC = Path(__file__).parent / "data" / "msc_layout"
"""Our problems in the layout of MultiSessionCollab's published cache (see its README.md)."""
MSC_DATASETS = ["mmlu", "medqa", "logiqa", "math-500", "math_hard"]


def _every(path: Path) -> list[Problem]:
    return load_problems(str(path), 100, seed=0, allow_fewer=True)


def _solution_holds(problem: Problem, solution: str) -> bool:
    if problem.kind == "math":
        return f"\\boxed{{{problem.answer}}}" in solution
    return problem.choices[ord(problem.answer) - ord("A")] in solution


@pytest.mark.parametrize("split", ["test", "train"])
@pytest.mark.parametrize("dataset", MSC_DATASETS)
def test_multisessioncollab_cache_files(dataset: str, split: str) -> None:
    path = MSC / "cache" / dataset / f"{split}set_size20_seed42.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    problems = load_problems(str(path), len(rows), seed=0)
    assert len(problems) == len(rows) == (3 if split == "test" else 1)
    by_id = {p.id: p for p in problems}
    for i, row in enumerate(rows):
        problem = by_id[f"{dataset}/{split}set_size20_seed42-{i}"]
        assert problem.source == f"{dataset}/{split}set_size20_seed42"
        assert _solution_holds(problem, row["solution"]), (problem, row["solution"])
        if problem.kind == "choice":
            assert len(problem.choices) >= 4
            assert not re.search(r"Choices:|Options:", problem.question)
            assert is_correct(problem, f"The answer is {problem.answer}.")
    kinds = {p.kind for p in problems}
    assert kinds == ({"math"} if dataset.startswith("math") else {"choice"})


def test_multisessioncollab_cache_answers() -> None:
    """The answer each layout gives: an option's text (MMLU numbered from 0, MedQA lettered,
    LogiQA's ``(X)`` prefix dropped), or the last boxed value of a solution."""
    problems = {p.id: p for p in _every(MSC / "cache")}
    answers = {
        key: problems[f"{key}/testset_size20_seed42-{n}"].answer
        for key, n in [("mmlu", 0), ("medqa", 2), ("logiqa", 0), ("math-500", 2), ("math_hard", 1)]
    }
    assert answers == {
        "mmlu": "B",
        "medqa": "B",
        "logiqa": "D",
        "math-500": "10",
        "math_hard": "\\frac{2}{15}",
    }
    assert "\n124 mEq/L\n" in problems["medqa/testset_size20_seed42-2"].question
    (five,) = _every(MSC / "cache" / "medqa" / "trainset_size20_seed42.json")
    assert len(five.choices) == 5 and five.answer == "B"


def test_multisessioncollab_cache_folder_keeps_datasets_apart() -> None:
    """Every cached file is named alike; the folder names the dataset; train files stay out."""
    problems = load_problems(str(MSC / "cache"), 15, seed=0)
    assert len({p.id for p in problems}) == 15
    assert {p.source for p in problems} == {f"{d}/testset_size20_seed42" for d in MSC_DATASETS}
    assert len(_every(MSC / "cache")) == 15


def test_agieval_logiqa_query_choices_gold(tmp_path: Path) -> None:
    row = {
        "query": "Q: All squares are rectangles. Which follows? "
        "Answer Choices: (A)Some rectangles are squares. (B)No square is a rectangle. "
        "(C)All rectangles are squares. (D)None.\nA: Among A through D, the answer is",
        "choices": [
            "(A)Some rectangles are squares.",
            "(B)No square is a rectangle.",
            "(C)x",
            "(D)y",
        ],
        "gold": [0],
    }
    (problem,) = load_problems(str(write_jsonl(tmp_path / "logiqa.jsonl", [row])), 1, seed=0)
    assert problem.answer == "A" and problem.choices[0] == "Some rectangles are squares."
    assert problem.question.startswith("All squares are rectangles")
