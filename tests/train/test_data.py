from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.cli import main
from rapport.log import MemoryItem, MemoryState, MemoryVersion
from rapport.memory import parse_reflection
from rapport.store import RunStore
from rapport.train import (
    ReflectionExample,
    build_examples,
    enforced_preferences,
    export_dataset,
    load_preferences,
    memory_notes_of,
    read_examples,
    split_by_user,
    template_note,
)

PREFS = load_preferences("collab")


def test_enforced_preferences_carry_the_users_words(session):
    record = session("u1", 0, ["bullet_points", "direct"])
    found = enforced_preferences(record)
    assert [e.preference_id for e in found] == ["bullet_points", "direct"]
    assert found[0].utterance == "Please use bullet points, not paragraphs."


def test_template_targets_parse_and_notes_carry_over(session):
    records = [session("u1", 0, ["bullet_points"]), session("u1", 1, ["direct"])]
    first, second = build_examples(records, PREFS, run="r")
    parsed = parse_reflection(first.target or "")
    assert parsed is not None
    assert parsed.notes == [template_note("bullet_points", PREFS)]
    assert parsed.notes[0].startswith("Bullet points: ")
    assert second.prior_notes == parsed.notes
    assert second.known_preference_ids == ["bullet_points"]
    assert "PUSHBACK" in second.transcript
    assert {first.target_source, second.target_source} == {"template"}


def test_memory_targets_come_from_the_next_memory_version(session):
    version = MemoryVersion(
        condition="reflection",
        user_id="u1",
        version=1,
        state=MemoryState(items=[MemoryItem(id="n1", text="Answer in bullet points.")]),
    )
    (example,) = build_examples(
        [session("u1", 0, ["bullet_points"])], PREFS, memory_notes=memory_notes_of([version])
    )
    assert example.target_source == "memory"
    parsed = parse_reflection(example.target or "")
    assert parsed is not None and parsed.notes == ["Answer in bullet points."]


def _example(user: str, index: int) -> ReflectionExample:
    return ReflectionExample(
        id=f"r/c/{user}/{index}", user_id=user, condition="c", session_index=index, transcript="t"
    )


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 5)), min_size=1))
def test_split_puts_no_user_on_both_sides(keys):
    examples = [_example(user, index) for user, index in keys]
    train, evaluation = split_by_user(examples, eval_fraction=0.3, seed=1)
    assert not {e.user_id for e in train} & {e.user_id for e in evaluation}
    assert len(train) + len(evaluation) == len(examples)
    if len({e.user_id for e in examples}) >= 2:
        assert train and evaluation


def _store(run_dir: Path, records) -> None:
    with RunStore(run_dir) as store:
        for record in records:
            version = MemoryVersion(
                condition=record.condition, user_id=record.user_id, version=record.index + 1
            )
            store.commit_session(record, version)


def test_export_writes_user_split_jsonl(tmp_path, session):
    records = [session(f"u{u}", i, ["bullet_points"]) for u in range(5) for i in range(2)]
    _store(tmp_path / "run", records)
    summary = export_dataset([tmp_path / "run"], tmp_path / "data", targets="template")
    train = read_examples(tmp_path / "data" / "train.jsonl")
    evaluation = read_examples(tmp_path / "data" / "eval.jsonl")
    assert len(train) + len(evaluation) == 10
    assert not {e.user_id for e in train} & {e.user_id for e in evaluation}
    assert summary.enforcements == 10


def test_cli_data_and_bad_run_dir(tmp_path, session, capsys):
    _store(tmp_path / "run", [session("u1", 0, ["direct"]), session("u2", 0, ["direct"])])
    assert main(["train", "data", str(tmp_path / "run"), "--out", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "summary.json").is_file()
    assert main(["train", "data", str(tmp_path / "nope"), "--out", str(tmp_path / "e")]) == 2
    assert "no run directory" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--condition", "nope"], "no condition 'nope'"),
        (["--taxonomy", "nope"], "unknown taxonomy 'nope'"),
        (["--out", "{tmp}/afile"], "is a file"),
    ],
)
def test_cli_data_refuses_bad_input_in_one_line(tmp_path, session, capsys, extra, message):
    _store(tmp_path / "run", [session("u1", 0, ["direct"])])
    (tmp_path / "afile").write_text("x")
    argv = ["train", "data", str(tmp_path / "run"), "--out", str(tmp_path / "d")]
    assert main(argv + [e.format(tmp=tmp_path) for e in extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no examples"),
        ("{not json\n", ":1: not a reflection example"),
        ("[1]\n", ":1: not a reflection example"),
        ('{"id": "x"}\n', ":1: not a reflection example"),
        (b"\xff\xfe\n", "cannot read examples"),
    ],
)
def test_cli_reflect_refuses_a_bad_data_file_in_one_line(tmp_path, capsys, content, message):
    data = tmp_path / "d.jsonl"
    data.write_bytes(content if isinstance(content, bytes) else content.encode())
    argv = ["train", "reflect", "--model", "scripted/echo", "--data", str(data)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_cli_reflect_refuses_a_count_below_one(tmp_path, capsys):
    (tmp_path / "d.jsonl").write_text("")
    argv = ["train", "reflect", "--model", "scripted/echo", "--data", str(tmp_path / "d.jsonl")]
    with pytest.raises(SystemExit) as refused:  # argparse refuses it, before any model
        main([*argv, "-n", "0"])
    assert refused.value.code == 2
    assert "-n needs a whole number from 1" in capsys.readouterr().err
