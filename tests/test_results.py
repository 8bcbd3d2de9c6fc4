"""Every table of numbers in docs/ and the README that is marked as coming from a stored run
(``<!-- results: NAME, table: TITLE -->`` right above it) equals what
``rapport report results/NAME --format markdown`` prints under that title."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from rapport.cli import main

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
MARKER = re.compile(r"<!-- results: (?P<name>[\w.-]+), table: (?P<title>.+?) -->")


def doc_tables(text: str) -> list[tuple[str, str, list[str]]]:
    """(run name, table title, the table's lines) for each marker in a Markdown text outside
    code blocks; the table is the block of ``|`` lines after the marker (blank lines before it
    skipped)."""
    lines = text.splitlines()
    found = []
    fenced = False
    for n, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced  # a marker shown in a code block is an example
        match = None if fenced else MARKER.fullmatch(line.strip())
        if match is None:
            continue
        rest = lines[n + 1 :]
        while rest and not rest[0].strip():
            rest = rest[1:]
        table = []
        for row in rest:
            if not row.startswith("|"):
                break
            table.append(row.rstrip())
        found.append((match["name"], match["title"], table))
    return found


def report_tables(markdown: str) -> dict[str, list[str]]:
    """Title -> table lines of ``rapport report --format markdown`` output."""
    tables: dict[str, list[str]] = {}
    for block in markdown.split("### ")[1:]:
        title, _, body = block.partition("\n")
        tables[title.strip()] = [row for row in body.splitlines() if row.startswith("|")]
    return tables


def _marked() -> list[tuple[str, str, str, list[str]]]:
    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    return [
        (doc.relative_to(ROOT).as_posix(), name, title, table)
        for doc in docs
        for name, title, table in doc_tables(doc.read_text(encoding="utf-8"))
    ]


MARKED = _marked()


def stored_tables(name: str, capsys: pytest.CaptureFixture[str]) -> dict[str, list[str]]:
    """The tables ``rapport report results/NAME --format markdown`` prints, by title."""
    assert main(["report", str(RESULTS / name), "--format", "markdown"]) == 0
    return report_tables(capsys.readouterr().out)


def differences(text: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What in a Markdown text's marked tables differs from the stored runs."""
    found = []
    for name, title, table in doc_tables(text):
        if not (RESULTS / name / "run.sqlite").is_file():
            found.append(f"results/{name} holds no stored run")
            continue
        tables = stored_tables(name, capsys)
        if title not in tables:
            found.append(f"results/{name} has no table '{title}': {sorted(tables)}")
        elif table != tables[title]:
            found.append(f"results/{name}, '{title}': the docs table differs from the run's")
    return found


@pytest.mark.parametrize(
    ("doc", "name", "title", "table"), MARKED, ids=[f"{m[0]}:{m[1]}:{m[2]}" for m in MARKED]
)
def test_a_docs_table_equals_its_stored_run(
    doc: str, name: str, title: str, table: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert differences(text, capsys) == [], (
        f"{doc}: copy the table from `rapport report results/{name} --format markdown`"
    )


def test_a_number_changed_by_hand_in_a_marked_table_is_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    title = "scripted: mean over users [95% CI]"
    table = stored_tables("resume-example", capsys)[title]
    doc = f"Prose.\n\n<!-- results: resume-example, table: {title} -->\n\n" + "\n".join(table)
    assert differences(doc + "\n\nMore prose.\n", capsys) == []
    row = table[2]
    edited = row.replace("0.", "1.", 1)
    assert edited != row
    changed = doc.replace(row, edited)
    assert differences(changed, capsys) == [
        f"results/resume-example, '{title}': the docs table differs from the run's"
    ]
    assert differences(changed.replace("resume-example", "absent"), capsys) == [
        "results/absent holds no stored run"
    ]


@pytest.mark.parametrize("name", sorted(p.name for p in RESULTS.iterdir() if p.is_dir()))
def test_reading_a_stored_run_writes_nothing_beside_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.testclient import TestClient

    from rapport.view import create_app

    run_dir = tmp_path / name
    shutil.copytree(RESULTS / name, run_dir)
    before = sorted(p.name for p in run_dir.iterdir())
    assert main(["report", str(run_dir), "--format", "markdown"]) == 0
    with TestClient(create_app(run_dir)) as client:
        assert client.get("/").status_code == 200
        assert client.get("/sessions").status_code == 200
    assert sorted(p.name for p in run_dir.iterdir()) == before


MACHINE_PATH = re.compile(rb"(?<![\w.$~-])/(?:root|home|tmp|work|Users|var/folders)/[\w.-]+")
"""A folder of the machine that made a run (a home, a temp or a work folder)."""


@pytest.mark.parametrize("name", sorted(p.name for p in RESULTS.iterdir() if p.is_dir()))
def test_a_stored_run_names_no_folder_of_the_machine_that_made_it(name: str) -> None:
    for path in sorted((RESULTS / name).rglob("*")):
        if path.is_file():
            found = MACHINE_PATH.findall(path.read_bytes())
            assert not found, f"{path.relative_to(ROOT)} names {sorted(set(found))[:3]}"


def test_the_machine_path_check_finds_one() -> None:
    assert MACHINE_PATH.findall(b'{"path": "/home/ann/models/q.gguf"}')
    assert not MACHINE_PATH.findall(b'{"path": "$RAPPORT_MODELS/q.gguf", "url": "a/tmp/b"}')
