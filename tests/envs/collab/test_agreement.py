"""Enforcement agreement between the simulated user and the deterministic checkers."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

from rapport.envs.collab import PreferenceVerdictEvent, enforcement_agreement
from rapport.llm import Request, ScriptedAPI

REPLIES = [
    "Which numbers does your problem use?",
    "The speed is 120 / 2 = 60 km/h.",
    "- Distance: 120 km\n- Time: 2 h\n- Speed: 60 km/h",
    "Thanks for asking! The speed is 60 km/h.",
]


async def test_code_rules_make_enforcement_agree_with_the_checkers(kit: SimpleNamespace) -> None:
    rng = random.Random(0)

    def coin_flip_user(request: Request) -> str:
        if request.json_schema is None:
            return "I have a train question."
        # A careless user model: its verdicts are coin flips, whatever the reply says.
        return kit.reaction(
            satisfied=rng.random() < 0.5, enforce=rng.random() < 0.5, message="Hmm."
        )

    records = []
    for session in range(6):
        agent_rng = random.Random(session)
        h = kit.Harness(
            lambda _r, r=agent_rng: r.choice(REPLIES), ScriptedAPI(responder=coin_flip_user)
        )
        _bench, record = await h.run(max_turns=4)
        records.append(record)

    checkable = [
        v
        for r in records
        for v in r.events_of(PreferenceVerdictEvent)
        if v.checker_satisfied is not None
    ]
    assert len(checkable) >= 30
    model_alone = enforcement_agreement(records, decision="model")
    final = enforcement_agreement(records)
    print(f"agreement: model alone {model_alone:.3f}, after code rules {final:.3f}")
    assert model_alone < 0.8
    assert final >= 0.95


def test_no_checkable_pair_gives_nan() -> None:
    assert math.isnan(enforcement_agreement([]))


async def test_the_report_table_gives_pairs_and_both_shares(kit: SimpleNamespace) -> None:
    from rapport.envs.collab import agreement_table

    def careless_user(request: Request) -> str:
        if request.json_schema is None:
            return "I have a train question."
        # The user model calls every preference broken; the bulleted, blunt reply is not.
        return kit.reaction(satisfied=False, enforce=False, message="Fine.")

    agent_reply = "- Distance: 120 km\n- Speed: 60 km/h"
    h = kit.Harness(lambda _r: agent_reply, ScriptedAPI(responder=careless_user))
    _bench, record = await h.run(max_turns=2)
    table = agreement_table([record])
    [[condition, pairs, final, alone]] = table.rows
    assert condition == record.condition and pairs >= 2
    assert final == round(enforcement_agreement([record]), 3) == 1.0
    assert alone == round(enforcement_agreement([record], decision="model"), 3) < 1.0
    assert agreement_table([]).rows == []
