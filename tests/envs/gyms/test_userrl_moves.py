"""Reading a move as UserRL does (the default with ``--gym-data``), and leniently (``small``)."""

from __future__ import annotations

import pytest

from rapport.envs.gyms import make_userrl_gym, parse_action, userrl_move

_TASK = {"id": "f", "rule": "a - b + c * d", "test_case": [1.0, 9.0, 2.0, -4.0], "expected": -16.0}


@pytest.mark.parametrize(
    ("message", "strip", "kind", "text"),
    [
        ("[answer] -16", False, "answer", "-16"),
        ("[action] -1 2 3 4", False, "action", "-1 2 3 4"),
        (" [answer] 15", False, "invalid", " [answer] 15"),
        (" [answer] 15", True, "answer", "15"),
        ("Answer: 15", True, "invalid", "Answer: 15"),
        ("[Answer] 15", True, "invalid", "[Answer] 15"),
        ("**[answer]** 15", True, "invalid", "**[answer]** 15"),
        ("[guess] 15", True, "invalid", "[guess] 15"),
        ("[finish]", False, "finish", ""),
    ],
)
def test_userrl_reads_only_a_message_that_starts_with_its_tag(
    message: str, strip: bool, kind: str, text: str
) -> None:
    move = userrl_move(message, strip=strip)
    assert (move.kind, move.text) == (kind, text)


@pytest.mark.parametrize("answer", ["[answer] -16", "[answer] -1.6e+01", "[answer] -16.0"])
def test_a_negative_answer_is_credited(answer: str) -> None:
    gym = make_userrl_gym("function", _TASK, horizon=16, split="eval")
    gym.reset(0)
    step = gym.step(answer)
    assert step.reward == 1.0 and step.done


def test_a_negative_query_reaches_the_rule() -> None:
    gym = make_userrl_gym("function", _TASK, horizon=16, split="eval")
    gym.reset(0)
    assert gym.step("[action] -1 2 3 4").observation == "f(-1, 2, 3, 4) = 9"


@pytest.mark.parametrize("answer", ["Answer: -16", "[Answer] -16", "**[answer]** -16", "f = -16"])
def test_userrl_scores_a_loose_answer_zero_and_goes_on(answer: str) -> None:
    gym = make_userrl_gym("function", _TASK, horizon=16, split="eval")
    gym.reset(0)
    step = gym.step(answer)
    assert step.reward == 0.0 and not step.done
    assert "(You" not in step.observation, "no coaching notes under UserRL's reading"


@pytest.mark.parametrize("answer", ["Answer: -16", "**[answer]** -16", "[guess] -1.6e+01"])
def test_the_lenient_reader_takes_a_loose_answer_sign_and_all(answer: str) -> None:
    gym = make_userrl_gym("function", _TASK, horizon=16, split="eval", moves="lenient")
    gym.reset(0)
    step = gym.step(answer)
    assert step.reward == 1.0 and step.done


def test_the_lenient_reader_keeps_a_sign_but_drops_a_bullet() -> None:
    assert parse_action("[answer] -16").text == "-16"
    assert parse_action("[action] -1 2 3 4").text == "-1 2 3 4"
    assert parse_action("[answer]: - Paris").text == "Paris"
    assert parse_action("- [answer] -.5").text == "-.5"
