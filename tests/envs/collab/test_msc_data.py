"""MSC's profiles and problem cache, read as MSC's code reads them: preference texts from the
file, users in file order (all of them by default), each dataset's cached test problems in
file order for every user, train files kept apart. The fixtures are ours, in MSC's layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.envs import create_benchmark
from rapport.envs.collab import CollabBenchmark, ProblemSourceError, is_msc_cache, protocol_table
from rapport.log import ExperimentConfig, SessionRecord

PHRASES = [
    "Be directly to the point in every reply.",
    "Give replies in bullet-point format, one idea a line.",
    "Show step-by-step reasoning before the result.",
]


def write_profiles(path: Path, n: int) -> Path:
    rows = [
        {"i": i, "persona": f"Person number {i}.", "categories": [], "preferences": PHRASES}
        for i in range(n)
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def write_cache(root: Path, dataset: str, split: str, problems: list[str]) -> Path:
    folder = root / dataset
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"problem": p, "solution": f"So it is \\boxed{{{n}}}."} for n, p in enumerate(problems)]
    file = folder / f"{split}set_size{len(rows)}_seed42.json"
    file.write_text(json.dumps(rows), encoding="utf-8")
    return file


def config(**options: object) -> ExperimentConfig:
    return ExperimentConfig(benchmark="collab", sessions=3, options=dict(options))


def test_profiles_keep_their_words_and_order_and_all_are_users(tmp_path: Path) -> None:
    path = write_profiles(tmp_path / "user_profiles.json", 5)
    bench = create_benchmark(config(profiles=str(path)))
    assert bench.default_users() == 5
    users = bench.users(5, seed=0)
    assert [u.id for u in users] == [f"msc-{i:03d}" for i in range(5)]
    assert users[0].preference_texts == PHRASES
    assert users[0].preferences == ["direct", "bullet_points", "stepwise_derivation"]


def test_cached_test_problems_in_file_order_for_every_user(tmp_path: Path) -> None:
    asked = [f"What is {n} + {n}?" for n in range(4)]
    file = write_cache(tmp_path, "math-500", "test", asked)
    bench = create_benchmark(config(problems=str(file)))
    assert isinstance(bench, CollabBenchmark) and bench.pools is not None
    for user in bench.users(2, seed=7):
        specs = bench.sessions(user, 3, seed=7)
        assert [s.task.problem.question for s in specs] == asked[:3]  # type: ignore[attr-defined]


def test_a_cache_folder_never_mixes_train_into_test(tmp_path: Path) -> None:
    write_cache(tmp_path, "logic", "test", ["Test one?", "Test two?"])
    write_cache(tmp_path, "logic", "train", ["Train one?"])
    assert is_msc_cache(str(tmp_path))
    bench = create_benchmark(config(problems=str(tmp_path / "logic")))
    assert isinstance(bench, CollabBenchmark) and bench.pools is not None
    assert [p.question for p in bench.pools["logic"]] == ["Test one?", "Test two?"]
    train = create_benchmark(config(problems=str(tmp_path / "logic"), split="train"))
    assert [p.question for p in train.pools["logic"]] == ["Train one?"]  # type: ignore[attr-defined]


def test_each_dataset_of_a_cache_has_users_and_problems_of_its_own(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    write_cache(cache, "math_hard", "test", ["Hard one?", "Hard two?"])
    write_cache(cache, "mmlu", "test", ["Choice one?", "Choice two?"])
    write_cache(cache, "mmlu", "train", ["Choice train?"])
    profiles = write_profiles(tmp_path / "user_profiles.json", 2)
    bench = create_benchmark(config(problems=str(cache), profiles=str(profiles)))
    assert isinstance(bench, CollabBenchmark)
    users = bench.users(2, seed=0)
    assert [u.id for u in users] == [
        "math-hard-msc-000",
        "math-hard-msc-001",
        "mmlu-msc-000",
        "mmlu-msc-001",
    ]
    asked = {u.id: [s.task.problem.question for s in bench.sessions(u, 2, 0)] for u in users}  # type: ignore[attr-defined]
    assert asked["math-hard-msc-001"] == ["Hard one?", "Hard two?"]
    assert asked["mmlu-msc-000"] == ["Choice one?", "Choice two?"]


def test_datasets_picks_from_the_cache_and_refuses_one_it_lacks(tmp_path: Path) -> None:
    write_cache(tmp_path, "math_hard", "test", ["Hard one?"])
    write_cache(tmp_path, "mmlu", "test", ["Choice one?"])
    bench = create_benchmark(config(problems=str(tmp_path), datasets="mmlu"))
    assert list(bench.pools) == ["mmlu"]  # type: ignore[attr-defined]
    assert [u.id for u in bench.users(1, 0)] == ["user-000"]
    with pytest.raises(ProblemSourceError, match="no dataset medqa"):
        create_benchmark(config(problems=str(tmp_path), datasets="mmlu,medqa"))
    with pytest.raises(ProblemSourceError, match="datasets picks from MSC's cache"):
        create_benchmark(config(problems="generated", datasets="mmlu"))


def test_the_reference_solution_is_kept_for_the_judge(tmp_path: Path) -> None:
    file = write_cache(tmp_path, "math_hard", "test", ["What is 0 + 0?"])
    [problem] = create_benchmark(config(problems=str(file))).pools["math-hard"]  # type: ignore[attr-defined]
    assert problem.answer == "0" and problem.reference == "So it is \\boxed{0}."


def test_the_report_names_the_dataset_and_the_grader(tmp_path: Path) -> None:
    from rapport.envs.collab import CollabOutcome, Problem

    problem = Problem(
        id="p", source="mmlu/testset_size20_seed42", kind="math", question="q", answer="4"
    )
    records = [
        SessionRecord(
            run_id="r",
            condition="none",
            user_id="u",
            spec_id=f"s{n}",
            index=n,
            outcome=CollabOutcome(
                draft=draft,
                answer="4",
                problem_id="p",
                problem=problem,
                grader="judge",
                judged=judged,
            ),
        )
        for n, (draft, judged) in enumerate([("4", True), ("5", True)])
    ]
    table = protocol_table(records)
    assert table.rows == [["none", "mmlu", "judge", 2, 0.5]]


def test_the_oracle_gets_what_the_user_is_told_in_the_profile_s_words(tmp_path: Path) -> None:
    from rapport.envs import Condition

    path = write_profiles(tmp_path / "user_profiles.json", 1)
    bench = create_benchmark(config(profiles=str(path)))
    [user] = bench.users(1, seed=0)
    told = bench.truth(user, Condition(name="oracle", memory="oracle"))
    assert told == "\n".join(f"{n}. {p}" for n, p in enumerate(PHRASES, start=1))
    plain = Condition(name="s2", memory="oracle", settings={"preferences": False})
    assert bench.truth(user, plain) == ""
