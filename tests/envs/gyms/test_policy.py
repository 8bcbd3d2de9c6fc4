"""The condensed domain policy TauGym shows a small model."""

from __future__ import annotations

import pytest

from rapport.envs.gyms import condense_policy

POLICY = """# Shop policy

You help customers with their orders. You must check the user's identity first.
The weather is often nice.

## Cancel order
A cancelled order is refunded in 5 days.
- Only pending orders can be cancelled.
- You must confirm the order id with the customer.

## Exchange item
- Items can only be exchanged for the same product type.
- Exchanged items must be delivered.

## Loyalty points
- Points never expire.
"""


def test_a_big_budget_gives_the_policy_unchanged_and_zero_gives_none() -> None:
    assert condense_policy(POLICY, 10_000) == POLICY.strip()
    assert condense_policy(POLICY, 0) == ""


def test_the_condensed_policy_keeps_headings_and_rules_nearest_the_request() -> None:
    short = condense_policy(POLICY, 260, focus="I want to cancel my order please")
    assert len(short) <= 260
    assert short.startswith("Sections: Shop policy; Cancel order; Exchange item; Loyalty points.")
    assert "must check the user's identity" in short
    assert "Only pending orders can be cancelled" in short
    assert "weather" not in short and "refunded in 5 days" not in short
    assert "Exchange item:" not in short
    other = condense_policy(POLICY, 260, focus="Can I exchange an item?")
    assert "Exchange item:" in other and "Cancel order:" not in other


def test_taugym_shows_the_condensed_policy_within_its_budget() -> None:
    pytest.importorskip("tau2")
    from rapport.envs.gyms import TauGym

    gym = TauGym(domain="retail", policy_chars=700)
    gym.reset(1)
    assert 0 < len(gym.policy) <= 700 and "Domain policy (condensed):" in gym.prompt()
    assert "confirmation" in gym.policy
    bare = TauGym(domain="retail", policy_chars=0)
    bare.reset(1)
    assert "Domain policy" not in bare.prompt()
