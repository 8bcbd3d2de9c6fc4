"""PRIME through 5 rounds under the runner, with scripted models: what each round's
distillation added, what each evolution operator touched, what pruning took out and why,
and how often each experience was retrieved, whatever the concurrency."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from rapport.cli import main
from rapport.eval import run
from rapport.llm import ModelRoles, Request, ScriptedAPI, ToolCall
from rapport.log import ExperimentConfig, RecallEvent
from rapport.memory.prime import (
    EvolutionSettings,
    ExperienceLibrary,
    PrimeMemory,
    library_from_state,
)
from rapport.store import RunStore

REWRITES = (
    "Ask one question that splits the listed names, then guess.",
    "Halve the remaining names with each question before any guess.",
    "Rule out a whole group of names with one question, then guess among the rest.",
    "Ask about a feature most of the listed names share before guessing.",
    "Guess only once your questions have left a single name standing.",
    "Start from the name the first answer points to, and confirm it with a question.",
    "Name the likeliest candidate only after two questions have narrowed the list.",
    "Keep a tally of which names each answer rules out, and guess the survivor.",
)
"""The rewrites' lessons, in the order their prompts first come (so that a rewrite never
says what its parent says: such a rewrite is not applied)."""
_rewrite_order: dict[str, int] = {}


def responder(request: Request) -> str | ToolCall:
    """The agent guesses the listed names in order; the distiller writes a lesson per
    episode; each new rewrite prompt gets the next of `REWRITES`."""
    title = (request.json_schema or {}).get("title")
    if title == "Lesson":
        episode = request.messages[0].content.split("The task began with: ")[1].split("\n")[0]
        case = zlib.crc32(episode.encode()) % 1000
        return json.dumps(
            {"lesson": f"Guess the listed names one by one from the first (case {case})."}
        )
    if title == "Rewrite":
        prompt = request.messages[0].content
        lesson = REWRITES[_rewrite_order.setdefault(prompt, len(_rewrite_order)) % len(REWRITES)]
        return json.dumps({"situation": "s", "action": "a", "outcome": "o", "lesson": lesson})
    opening = request.messages[0].content if request.messages[0].role == "user" else ""
    for m in request.messages:
        if m.role == "user" and "one of these:" in m.content:
            opening = m.content
    names = re.search(r"one of these: (.+?)\. Ask", opening)
    guessed = sum(m.role == "assistant" for m in request.messages)
    choices = names.group(1).split(", ") if names else ["cat"]
    return f"[answer] {choices[min(guessed, len(choices) - 1)]}"


def settings(self: PrimeMemory) -> EvolutionSettings:
    """Every operator fires on every target it may take (one crossover pair a round, and
    generalization from a success rate of 50%)."""
    return EvolutionSettings(
        iterations=self.rounds,
        p_mutation=1.0,
        p_generalization=1.0,
        p_crossover=1.0,
        max_pairs=1,
        general_success=0.5,
        keep_log_fields=True,
    )


def build(run_dir: Path, concurrency: int) -> tuple[ExperienceLibrary, int]:
    """Run 2 telepathy streams of 10 easy train episodes (5 rounds of 4) and one eval
    episode each; the newest library, and how many experiences the train episodes' recall
    events showed the agent."""
    config = ExperimentConfig(
        benchmark="gym",
        memory=["prime"],
        users=2,
        seed=7,
        concurrency=concurrency,
        run_dir=run_dir,
        options={
            "env": "telepathy",
            "difficulty": "easy",
            "horizon": 3,
            "train_episodes": 10,
            "eval_episodes": 1,
            # a right guess after questions scores under 1, so episodes fall in several zones
            "telepathy_score": "discounted",
        },
        memory_options={
            "prime": {"embedder": "hashing", "min_similarity": 0.0, "select_with_model": False}
        },
    )
    run(config, models=ModelRoles({"all": ScriptedAPI(responder=responder)}), progress=False)
    with RunStore(run_dir, create=False) as store:
        versions = store.memory_versions(condition="prime")
        records = store.sessions()
    shown = sum(
        line.startswith("- ")
        for r in records
        if r.split == "train"
        for e in r.events_of(RecallEvent)
        for line in e.text.splitlines()
    )
    return max((library_from_state(v.state) for v in versions), key=lambda lib: lib.version), shown


@pytest.fixture
def everything_fires(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PrimeMemory, "evolution", property(settings))


@pytest.mark.usefixtures("everything_fires")
def test_five_rounds_of_distillation_evolution_and_pruning(tmp_path: Path) -> None:
    library, shown = build(tmp_path / "run", concurrency=2)
    history = library.history
    assert [(h.iteration, h.version) for h in history] == [(i, i) for i in range(1, 6)]
    assert all(h.note.startswith(f"round {h.iteration}: distilled 4 episodes") for h in history)
    # one experience per episode, or its episode merged into one that says the same
    assert history[0].added == ["exp-1"] and history[0].merged == ["exp-1"] * 3
    assert [len(h.merged) for h in history] == [3, 2, 2, 3, 3]
    # which experiences each operator rewrote, iteration by iteration; generalization never
    # fires: every episode is a telepathy one, and it needs success in more than one env
    assert [h.touched for h in history] == [
        {},
        {"crossover": ["exp-5", "exp-6"]},
        {"mutation": ["exp-1", "exp-9"]},
        {"crossover": ["exp-10", "exp-15"]},
        {"crossover": ["exp-17", "exp-20"]},
    ]
    exps = library.experiences
    made = {e.id: (e.origin, e.parents) for e in exps.values() if e.parents}
    assert made == {
        "exp-9": ("crossover", ["exp-5", "exp-6"]),
        "exp-14": ("mutation", ["exp-1"]),
        "exp-15": ("mutation", ["exp-9"]),
        "exp-20": ("crossover", ["exp-10", "exp-15"]),
        "exp-25": ("crossover", ["exp-17", "exp-20"]),
    }
    assert all(e.success_envs in ([], ["telepathy"]) for e in exps.values())
    # a right guess at the first or second question solves the episode (golden); at the
    # third it scores 1 - 0.5 * 2/3, unsolved (preference); no right guess: a warning
    zones = {e.id: e.zone for e in exps.values() if e.origin == "distilled"}
    assert zones == {
        "exp-1": "warning",
        "exp-5": "golden",
        "exp-6": "preference",
        "exp-10": "golden",
        "exp-12": "golden",
        "exp-17": "preference",
        "exp-21": "golden",
    }
    # pruning runs at iterations 2 and 4 only, on experiences older than the iteration
    assert [h.removed for h in history] == [[], [], [], ["exp-12", "exp-14"], []]
    assert {i: e.pruned for i, e in exps.items() if e.pruned} == {
        "exp-12": "solved 1 of the 4 episodes that retrieved it over round 4 (25% < 30%)",
        "exp-14": "solved 0 of the 3 episodes that retrieved it over round 4 (0% < 30%)",
    }
    assert all(exps[i].created_iteration < 4 for i in history[3].removed)
    # retrieval counts: turns retrieved at, episodes retrieved in, of those solved
    track = {e.id: (e.retrievals, e.uses, e.successes) for e in exps.values() if e.retrievals}
    assert track == {
        "exp-1": (10, 7, 4),
        "exp-9": (4, 3, 2),
        "exp-10": (6, 3, 0),
        "exp-12": (4, 4, 1),
        "exp-14": (6, 3, 0),
        "exp-15": (6, 3, 0),
        "exp-17": (4, 2, 0),
        "exp-20": (4, 2, 0),
    }
    assert sum(e.retrievals for e in exps.values()) == shown, "every retrieval is counted"
    assert [e.id for e in library.active()] == ["exp-21", "exp-25"]
    assert [h.size for h in history] == [1, 2, 4, 2, 2]
    assert history[-1].zones == {"golden": 2, "warning": 0, "preference": 0}
    events = [ev.line() for ev in exps["exp-20"].events]
    assert events == [
        "iteration 4: created (crossover of exp-10, exp-15)",
        "iteration 5: retrieved (4 turns of 2 episodes, 0 solved)",
        "iteration 5: crossed -> exp-25 (with exp-17)",
    ]


@pytest.mark.usefixtures("everything_fires")
@pytest.mark.race
def test_the_library_is_the_same_whatever_the_concurrency(tmp_path: Path) -> None:
    def stable(library: ExperienceLibrary) -> dict[str, Any]:
        data = library.model_dump(mode="json")
        for version in data["history"]:
            version.pop("created_at")
        return data

    one, _ = build(tmp_path / "one", concurrency=1)
    four, _ = build(tmp_path / "four", concurrency=4)
    assert stable(one) == stable(four)


@pytest.mark.usefixtures("everything_fires")
def test_library_show_prints_each_survivors_history_and_the_pruned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path / "run", concurrency=1)
    assert main(["library", "show", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    lineage = out[out.index("## Lineage") : out.index("## Pruned")]
    head = "- **exp-25** (golden, verification; telepathy): "
    assert any(head + lesson in lineage for lesson in REWRITES)
    assert "  - iteration 5: created (crossover of exp-17, exp-20)" in lineage
    assert "    - iteration 4: created (crossover of exp-10, exp-15)" in lineage
    assert "      - iteration 4: crossed -> exp-20 (with exp-15)" in lineage
    assert "- exp-14 (warning, verification; telepathy), iteration 4: solved 0 of" in out
    table = out[out.index("## Library by iteration") : out.index("## Lineage")]
    assert "| 4 | 4 | 2 | 1 | 0 | 1 | 2 | 3 | 0 | 0 | 2 | 2 | 0 |" in table
