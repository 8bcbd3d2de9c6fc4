"""The p condition's per-setting histories: generated from the pattern, then checked."""

from __future__ import annotations

import pytest

from rapport.envs.prefix import align, all_settings, extra_settings, get_setting
from rapport.envs.prefix._history import HistoryError, build, history
from rapport.envs.prefix._prompts import agent_instructions

EVERY = [*all_settings(), *extra_settings()]


@pytest.mark.parametrize("setting", EVERY, ids=lambda s: s.id)
def test_every_history_follows_its_setting_in_session_2_and_not_in_session_1(setting) -> None:
    made = history(setting.id)
    second, first = align(setting, made.second), align(setting, made.first)
    assert second.precision == 1.0 and second.recall in (1.0, None)
    assert (first.precision, first.recall) != (second.precision, second.recall)
    text = made.render()
    assert text.count("Earlier session") == 2 and setting.feedback in text


def test_a_history_whose_person_names_the_preference_is_refused() -> None:
    setting = get_setting("each_confirmation")
    leaky = setting.model_copy(update={"feedback": "Please confirm every step."})
    with pytest.raises(HistoryError, match="names the preference"):
        build(leaky)


def test_p_shows_the_histories_of_every_preference_held_and_no_p_none() -> None:
    held = [get_setting("tool_medium"), get_setting("silent")]
    p = agent_instructions("p", held)
    assert all(s.feedback in p for s in held) and p.count("Earlier session 1") == 2
    assert "Earlier session" not in agent_instructions("no_p", held)
