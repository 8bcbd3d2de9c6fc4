"""PRIME end to end on a gym with the scripted model: learn, retrieve, freeze, export, transfer."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from rapport.envs import Condition
from rapport.envs.gyms import GymBenchmark, GymOptions
from rapport.eval import play_session
from rapport.llm import Message, ModelRoles, OutputValidationError, Request, ScriptedAPI, ToolCall
from rapport.log import MemoryState, RecallEvent, SessionRecord
from rapport.memory import HashingEmbedder, UserRef
from rapport.memory.prime import (
    PAPER_SIMILARITY,
    SIMILARITY,
    Conditions,
    Experience,
    ExperienceLibrary,
    Exploration,
    PendingEpisode,
    PrimeMemory,
    episode_facts,
    library_from_state,
    names_any,
    quotes,
    turn_notes,
    zone_prompt,
)


def _tag(request: Request) -> int:
    """A number per episode (from its opening; not the test input itself: that names the
    answer), so that lessons differ from episode to episode."""
    episode = request.messages[0].content.split("The task began with: ")[1].split("\n")[0]
    return zlib.crc32(episode.encode())


def responder(request: Request) -> str | ToolCall:
    title = (request.json_schema or {}).get("title")
    if title == "DistilledText":
        return json.dumps(
            {
                "situation": "probing the hidden function",
                "action": "queried f",
                "outcome": "learned one value",
                "lesson": f"vary one input at a time (episode {_tag(request)})",
                "preconditions": ["the rule is unknown"],
            }
        )
    if title == "Lesson":
        return json.dumps({"lesson": f"vary one input at a time (episode {_tag(request)})"})
    if title == "Rewrite":
        return json.dumps(
            {
                "situation": "s",
                "action": "a",
                "outcome": "o",
                "lesson": "Query one input at a time first.",
            }
        )
    if request.tools:
        return ToolCall(name="use_experience_1")
    asked = sum(m.role == "assistant" for m in request.messages)
    return "[action] f(1, 2, 3, 4)" if asked < 2 else "[answer] rule: a + 1000; value: 9999"


def roles(name: str = "scripted/a") -> ModelRoles:
    return ModelRoles({"all": ScriptedAPI(responder=responder, name=name)})


async def run_all(
    memory: PrimeMemory, models: ModelRoles, train: int = 2, **options: Any
) -> list[SessionRecord]:
    # answers: once keeps each episode at three moves (two queries and a wrong answer)
    options = {"answers": "once", **options}
    bench = GymBenchmark(
        GymOptions(env=["function"], train_episodes=train, eval_episodes=1, horizon=4, **options)
    )
    user = bench.users(1, seed=0)[0]
    records = []
    for spec in bench.sessions(user, 0, seed=0):
        record = await play_session(
            bench,
            spec,
            user,
            models=models,
            memory=memory,
            condition=Condition(name="prime", memory="prime"),
        )
        records.append(record)
    return records


async def _first_library() -> list[Experience]:
    models = roles()
    memory = prime(models)
    await run_all(memory, models, train=1)
    return sorted(memory.library.experiences.values(), key=lambda e: e.id)


def prime(models: ModelRoles, **options: object) -> PrimeMemory:
    return PrimeMemory(models, encoder=HashingEmbedder(), min_similarity=0.0, **options)


async def test_train_episodes_build_a_library_that_later_episodes_retrieve() -> None:
    models = roles()
    memory = prime(models)
    records = await run_all(memory, models)
    first = memory.library.history[0]
    assert first.added == ["exp-1"] and first.note.startswith("round 1: distilled 1 episode")
    assert [h.version for h in memory.library.history] == [1, 2], "one version per round"
    # one experience per episode; no turn has a reward, so the key turns are spread over
    # the three moves (t/H = 0, .25, .5) and the last of them sets the stage
    [e] = await _first_library()
    assert (e.stage, e.zone, e.conditions.envs) == ("verification", "warning", ["function"])
    assert e.conditions.turn_range == (0, 2)
    assert e.events[0].kind == "created" and "key turns 1, 2, 3" in e.events[0].note
    assert records[1].events_of(RecallEvent), "the second train episode retrieves experiences"
    recall = records[1].events_of(RecallEvent)[0].text
    assert recall.startswith("Warnings (avoid this):")
    assert records[0].scores == {"reward": 0.0, "success": 0.0}


async def test_eval_episodes_leave_the_library_frozen() -> None:
    models = roles()
    memory = prime(models)
    records = await run_all(memory, models)
    before = memory.library.model_dump_json()
    await memory.learn(UserRef(id="function-0"), records[-1])  # an eval record
    assert records[-1].split == "eval" and memory.library.model_dump_json() == before


async def test_usage_is_tracked_for_retrieved_experiences() -> None:
    models = roles()
    memory = prime(models, iterations=1)  # no pruning: keep the used ones to inspect
    records = await run_all(memory, models, train=2)
    used = [e for e in memory.library.experiences.values() if e.uses]
    assert used and all(e.uses == 1 and e.successes == 0 for e in used)
    recalled = sum(len(r.events_of(RecallEvent)) for r in records if r.split == "train")
    assert sum(e.retrievals for e in used) == recalled, "one retrieval per turn it was offered"
    poor = records[1].outcome.trajectory_reward <= 0.3
    assert all(e.poor_uses == int(poor) for e in used)


async def test_snapshot_restores_the_shared_library_for_any_user() -> None:
    models = roles()
    memory = prime(models)
    await run_all(memory, models)
    state = memory.snapshot(UserRef(id="function-0"))
    assert state.items and state.items[0].provenance
    fresh = prime(roles())
    fresh.restore(UserRef(id="telepathy-0"), state)
    assert fresh.library.model_dump() == memory.library.model_dump()
    assert library_from_state(state).version == memory.library.version


async def test_a_resumed_memory_hears_every_users_waiting_episodes() -> None:
    models = roles()
    first = prime(models)
    records = await run_all(first, models, train=2)
    a, b = (PendingEpisode(round=9, record=r) for r in records[:2])
    first.pending = {"a": a}
    state_a = first.snapshot(UserRef(id="function-0"))
    first.pending = {"b": b}
    state_b = first.snapshot(UserRef(id="function-1"))
    fresh = prime(roles())
    fresh.restore(UserRef(id="function-0"), state_a)
    fresh.restore(UserRef(id="function-1"), state_b)
    assert sorted(fresh.pending) == ["a", "b"], "same version: the waiting episodes add up"
    older = fresh.library.model_copy(update={"version": 1})
    fresh.restore(
        UserRef(id="function-2"),
        MemoryState(data={"library": older.model_dump(mode="json"), "pending": {}}),
    )
    assert fresh.library.version == 2 and sorted(fresh.pending) == ["a", "b"]


async def test_the_evolution_rng_derives_from_the_run_seed() -> None:
    async def drawn(run_seed: int, **options: object) -> list[list[str]]:
        models = ModelRoles({"all": ScriptedAPI(responder=responder)}, seed=run_seed)
        memory = PrimeMemory(models, encoder=HashingEmbedder(), **options)
        for i in range(60):
            memory.library.add(
                Experience(
                    id=f"exp-{i}",
                    situation="s",
                    action="a",
                    outcome="o",
                    lesson="Try the inputs in order, from the smallest.",
                    stage="exploration",
                    zone="warning",
                    uses=1,
                    poor_uses=1,
                    conditions=Conditions(envs=["function"]),
                )
            )
        await memory._consolidate(0)
        return [h.touched.get("mutation", []) for h in memory.library.history]

    assert await drawn(1) == await drawn(1) != await drawn(2)
    assert await drawn(1, seed=5) == await drawn(2, seed=5), "the seed option fixes it"


async def test_library_exports_and_loads_under_another_model(tmp_path: Path) -> None:
    models = roles("scripted/builder")
    memory = prime(models)
    await run_all(memory, models)
    md = memory.library.to_markdown()
    assert "## Warnings (avoid this)" in md and "**Lesson:** vary one input" in md
    assert "Built with `scripted/builder`" in md
    assert "Retrieval: hashing, similarity >= 0." in md
    # the first round's experience was retrieved in round 2's failed episode: pruned at 2
    assert (
        "- exp-1 (warning, verification; function), iteration 2: solved 0 of the 1 episodes "
        "that retrieved it over round 2 (0% < 30%)" in md
    )
    assert "## Lineage" in md and "- **exp-2** (warning, verification; function)" in md
    path = tmp_path / "library.json"
    memory.save(path)
    other = prime(roles("scripted/other"), library_path=str(path))
    assert other.library.experiences.keys() == memory.library.experiences.keys()
    json.loads(path.read_text())


async def test_selection_model_picks_among_candidates_via_tools() -> None:
    lib = ExperienceLibrary()
    for i in range(5):
        lib.add(
            Experience(
                id=f"exp-{i}",
                situation=f"case {i}",
                action="ask",
                outcome="ok",
                lesson=f"lesson {i}",
                stage="exploration",
                zone="golden",
                conditions=Conditions(envs=["function"]),
            )
        )
    memory = prime(roles())
    memory.library = lib
    from rapport.memory import SessionInfo

    await memory.context(
        UserRef(id="u"),
        SessionInfo(index=0, benchmark="gym", task="function", horizon=16, split="train"),
    )
    text = await memory.recall(UserRef(id="u"), [Message(role="user", content="case 3")])
    assert text.count("\n- ") == 1 and "lesson" in text
    elsewhere = await memory.recall(
        UserRef(id="u"),
        [Message(role="user", content="x")] + [Message(role="assistant", content="y")] * 8,
    )
    assert elsewhere == ""  # turn 8 of 16 is the verification stage: no candidates


async def test_a_failed_distillation_is_listed_and_evolution_still_runs() -> None:
    def empty(request: Request) -> str | ToolCall:
        if (request.json_schema or {}).get("title") == "Lesson":
            return json.dumps({"advice": "none"})
        return responder(request)

    models = ModelRoles({"all": ScriptedAPI(responder=empty)})
    memory = prime(models)
    train = (await run_all(memory, models, train=1))[0]
    assert train.status == "ok", "the round's update failed, not the episode"
    assert not memory.library.experiences and memory.library.iteration == 1
    [note] = memory.library.history[0].dropped
    assert f"prime/function-0/{train.spec_id}: not distilled (OutputValidationError" in note
    assert OutputValidationError.__name__ in note


async def test_the_distiller_sees_the_whole_episode_and_on_request_what_it_hid() -> None:
    def writer(request: Request) -> str | ToolCall:
        if (request.json_schema or {}).get("title") != "DistilledText":
            return responder(request)
        return json.dumps(
            {
                "situation": "s",
                "action": "a",
                "outcome": "o",
                "lesson": "query one variable at a time",
                "preconditions": ["rule unknown", "Rule unknown.", " "],
            }
        )

    api = ScriptedAPI(responder=writer)
    memory = prime(ModelRoles({"all": api}), distill_fields="all", reveal_hidden=True)
    records = await run_all(memory, ModelRoles({"all": api}), train=1)
    prompt = next(
        r.messages[0].content
        for r in api.requests
        if (r.json_schema or {}).get("title") == "DistilledText"
    )
    hidden = records[0].outcome.hidden
    assert f"rule: {hidden['rule']}" in prompt and "never saw it" in prompt
    assert "* 1. f(1, 2, 3, 4) → f(1, 2, 3, 4) = " in prompt
    assert "* 3. [answer] rule: a + 1000; value: 9999 → Scored: rule wrong" in prompt
    assert "Write one experience for the verification stage" in prompt
    [made] = memory.library.experiences.values()
    assert made.conditions.preconditions == ["rule unknown"]
    assert "- **Applies to:** function; turns 1-3; preconditions: rule unknown" in made.markdown()

    again = ScriptedAPI(responder=writer)
    twice = prime(ModelRoles({"all": again}), iterations=0, distill_fields="all")  # no pruning
    await run_all(twice, ModelRoles({"all": again}), train=2)
    assert len(twice.library.experiences) == 1, "a lesson already in the library is not re-added"
    kept = twice.library.experiences["exp-1"]
    assert kept.episodes == 2 and "learned in 2 episodes" in kept.markdown()
    assert twice.library.history[-1].merged == ["exp-1"] and twice.library.version == 2
    assert [e.kind for e in kept.events] == ["created", "retrieved", "merged"]

    quiet = ScriptedAPI(responder=writer)
    await run_all(
        prime(ModelRoles({"all": quiet}), distill_fields="all"), ModelRoles({"all": quiet})
    )
    assert all("never saw it" not in r.messages[0].content for r in quiet.requests)


def test_markdown_groups_by_zone_then_environment_in_stage_order() -> None:
    lib = ExperienceLibrary(model="scripted/m", iteration=2)

    def exp(i: int, zone: str, stage: str, envs: list[str]) -> Experience:
        return Experience(
            id=f"exp-{i}",
            situation="s",
            action="a",
            outcome="o",
            lesson=f"lesson {i}",
            stage=stage,  # type: ignore[arg-type]
            zone=zone,  # type: ignore[arg-type]
            conditions=Conditions(envs=envs),
        )

    lib.add(exp(10, "warning", "exploration", ["telepathy"]))
    lib.add(exp(2, "warning", "exploration", ["telepathy"]))
    lib.add(exp(1, "warning", "completion", ["telepathy"]))
    lib.add(exp(3, "golden", "verification", ["*"]))
    md = lib.to_markdown()
    assert "Built with `scripted/m` over 2 evolution iterations." in md
    assert "| telepathy | 0 | 3 | 0 |" in md and "| any environment | 1 | 0 | 0 |" in md
    order = [md.index(f"#### exp-{i} ") for i in (3, 2, 10, 1)]
    assert order == sorted(order)
    assert md.index("## Golden rules") < md.index("### any environment") < md.index("## Warnings")
    glance = md[md.index("## At a glance") : md.index("## Golden rules")]
    first = "**any environment**\n\n- *golden, verification*: lesson 3 (learned in 1 episode"
    assert first in glance
    assert glance.index("lesson 2 (") < glance.index("lesson 10 (") < glance.index("lesson 1 (")


def test_a_prompt_line_reads_as_one_sentence() -> None:
    e = Experience(
        id="exp-1",
        situation="The user has said no twice.",
        action="Asked again",
        outcome="o",
        lesson="Guess now.",
        stage="completion",
        zone="warning",
    )
    assert e.line() == (
        "When the user has said no twice: Asked again (the episode failed). Guess now."
    )
    assert e.model_copy(update={"situation": "TV is off"}).line().startswith("When TV is off:")
    assert e.line(action=False) == (
        "When the user has said no twice (the episode failed from here): Guess now."
    )
    golden = e.model_copy(update={"zone": "golden", "id": "exp-2", "lesson": "Ask size."})
    shown = zone_prompt([e, golden])
    assert "Asked again" not in shown.split("Warnings (avoid this):")[1], "no failed move"
    assert "When the user has said no twice: Asked again (the episode succeeded)." in shown
    assert "Asked again (the episode failed)" in zone_prompt([e], warning_actions=True)


async def test_by_default_the_log_writes_situation_action_and_outcome() -> None:
    def writer(request: Request) -> str | ToolCall:
        if (request.json_schema or {}).get("title") != "Lesson":
            return responder(request)
        return json.dumps({"lesson": "Do not repeat a query; instead vary one input."})

    api = ScriptedAPI(responder=writer)
    memory = prime(ModelRoles({"all": api}), iterations=0)
    records = await run_all(memory, ModelRoles({"all": api}), train=1)
    prompt = next(
        r.messages[0].content
        for r in api.requests
        if (r.json_schema or {}).get("title") == "Lesson"
    )
    assert "note: you had made this exact move at turn 1: nothing new" in prompt
    assert "- You repeated earlier moves once (`f(1, 2, 3, 4)` twice)." in prompt
    [e] = memory.library.experiences.values()
    value = records[0].turns[2].text  # the reply to the first query
    scored = records[0].turns[6].text  # the reply to the answer
    # no turn reward: the key turns are spread, and the last (the answer) sets the situation
    assert e.situation == f"you have made 2 moves; the last, f(1, 2, 3, 4), got: {value}"
    assert e.action == "[answer] rule: a + 1000; value: 9999"
    assert e.outcome == f"{scored} (episode reward 0.00)"
    assert e.lesson == "Do not repeat a query; instead vary one input."
    assert not e.conditions.preconditions, "the model is not asked for preconditions"
    assert e.line().startswith("When you have made 2 moves; the last, f(1, 2, 3, 4)")

    equal = ScriptedAPI(responder=writer)
    memory = prime(ModelRoles({"all": equal}), iterations=0, credit="Equalized")
    await run_all(memory, ModelRoles({"all": equal}), train=1)
    [e] = memory.library.experiences.values()
    assert (e.situation, e.action, e.stage) == (
        "you have made no move yet",
        "[action] f(1, 2, 3, 4)",
        "exploration",
    ), "Equalized: the first key turn sets the stage"


def test_turn_notes_and_episode_facts_say_what_the_log_shows() -> None:
    def step(turn: int, action: str, observation: str, reward: float = 0.0) -> Exploration:
        return Exploration(turn, "", action, reward, observation, 2 * turn + 1)

    steps = [
        step(0, "[answer] cow", "No, that is not it."),
        step(1, "[action] Is it red?", "unsure"),
        step(2, "I think it might be red", "Unrecognized move."),
        step(3, "[action] Is it red?", "unsure"),
        step(4, "[answer] apple", "No, that is not it.\n(The turn limit is reached.)"),
    ]
    assert turn_notes(steps, 0) == ["you answered before asking or querying anything"]
    assert "the reply was unsure" in turn_notes(steps, 1)[0]
    assert turn_notes(steps, 2) == ["this message was not a valid move, so the turn was lost"]
    assert turn_notes(steps, 3)[0] == "you had made this exact move at turn 2: nothing new"
    assert turn_notes(steps, 4) == [
        "you had already answered once",
        "this was the last turn: the episode ran out of turns",
    ]
    assert episode_facts(steps, 0.0) == [
        "Your first move was an answer, given before any question or query.",
        "You repeated earlier moves once (`Is it red?` twice).",
        "1 of your 5 messages were not a valid move.",
        "You gave 2 answers.",
        "The episode ran out of turns after 5 moves.",
    ]
    won = [step(0, "[action] Is it red?", "yes"), step(1, "[answer] apple", "Yes!", 0.9)]
    assert episode_facts(won, 0.9) == [
        "Turn 2 earned reward 0.90 ([answer] apple).",
        "The episode succeeded with reward 0.90.",
    ]


def test_a_lesson_that_names_the_answer_is_recognized() -> None:
    assert names_any("Ask whether it is a Polar Bear first.", ["polar bear"])
    assert names_any("Guess apples sooner.", ["apple"])
    assert names_any("Then query f(7, 2, -3, -3).", ["f(7, 2, -3, -3)"])
    assert not names_any("Ask whether it is a bear.", ["polar bear"])
    assert not names_any("Ask about pineapple.", ["apple"])
    assert not names_any("anything", [""])


def test_a_lesson_that_parrots_the_environment_is_recognized() -> None:
    reply = "Query with four integers (|x| <= 1000), e.g. [action] f(1, 2, 3, 4)."
    assert quotes("Do not query with four integers (|x| <= 1000), e.g. f(1, 2, 3, 4)", [reply])
    assert not quotes("Query with four different integers each time.", [reply])
    assert not quotes("Query", [reply]) and not quotes("anything at all here", [])


async def test_a_turns_recall_goes_into_the_system_prompt_unless_asked_otherwise() -> None:
    async def agent_prompts(**options: Any) -> list[list[Message]]:
        api = ScriptedAPI(responder=responder)
        models = ModelRoles({"all": api})
        await run_all(prime(models), models, **options)
        return [r.messages for r in api.requests if not r.json_schema and not r.tools]

    recalled = [m for m in await agent_prompts() if "Notes relevant right now" in m[0].content]
    assert recalled and all(m[-1].role != "system" for m in recalled)
    assert "Warnings (avoid this):" in recalled[0][0].content
    after = [m for m in await agent_prompts(recall_in="turn") if m[-1].role == "system"]
    assert after and after[0][-1].content.startswith("Notes relevant right now:")
    assert all("Notes relevant" not in m[0].content for m in after)


def test_the_threshold_is_measured_per_embedder_or_the_papers_by_name() -> None:
    models = roles()
    measured = PrimeMemory(models, encoder=HashingEmbedder())
    assert measured.min_similarity == SIMILARITY[HashingEmbedder().name]
    named = PrimeMemory(models, encoder=HashingEmbedder(), min_similarity="measured")
    assert named.min_similarity == measured.min_similarity
    paper = PrimeMemory(models, encoder=HashingEmbedder(), min_similarity="paper")
    assert paper.min_similarity == PAPER_SIMILARITY == 0.6
    assert PrimeMemory(models, encoder=HashingEmbedder(), min_similarity=0.8).min_similarity == 0.8


@pytest.mark.parametrize("selector", ["agent", "memory"])
async def test_the_selector_role_picks_seeing_the_conversation(selector: str) -> None:
    lib = ExperienceLibrary()
    for i in range(5):
        lib.add(
            Experience(
                id=f"exp-{i}",
                situation=f"case {i}",
                action="ask",
                outcome="ok",
                lesson=f"lesson {i}",
                stage="exploration",
                zone="golden",
                conditions=Conditions(envs=["function"]),
            )
        )
    agent = ScriptedAPI(responder=lambda r: ToolCall(name="use_experience_2"), name="agent-model")
    other = ScriptedAPI(responder=lambda r: ToolCall(name="use_experience_4"), name="memory-model")
    memory = prime(ModelRoles({"agent": agent, "memory": other}), selector=selector)
    memory.library = lib
    from rapport.memory import SessionInfo

    await memory.context(
        UserRef(id="u"),
        SessionInfo(index=0, benchmark="gym", task="function", horizon=16, split="eval"),
    )
    said = [
        Message(role="user", content="case 3: f is hidden"),
        Message(role="assistant", content="[action] 1 0 0 0"),
    ]
    text = await memory.recall(UserRef(id="u"), [*said, Message(role="user", content="f = 2")])
    chosen, idle = (agent, other) if selector == "agent" else (other, agent)
    assert len(chosen.requests) == 1 and not idle.requests
    prompt = chosen.requests[0].messages[0].content
    assert "agent: [action] 1 0 0 0\nuser: f = 2" in prompt and "turn 2 of 16" in prompt
    assert text.count("\n- ") == 1, "the one candidate whose tool was called"
