"""The lockstep that makes batched decoding repeat: participants, keys, quiet waits."""

from __future__ import annotations

import logging
import threading

import pytest

from rapport.llm._lockstep import Lockstep, call_key, current_key

pytestmark = pytest.mark.race


def test_quiet_only_when_every_participant_waits() -> None:
    lock = Lockstep(patience_s=5)
    order: list[str] = []
    with lock.participant(), lock.participant():
        lock.waiting()  # one participant submitted a call

        def engine() -> None:
            blocking.set()
            lock.wait_quiet()
            order.append("step")

        blocking = threading.Event()
        thread = threading.Thread(target=engine)
        thread.start()
        assert blocking.wait(5)
        # Whether the engine is inside its wait yet or not, it may step only after this.
        order.append("second submits")
        lock.waiting()
        thread.join(5)
        assert order == ["second submits", "step"]
        lock.resumed()
        lock.resumed()


def test_patience_lets_the_engine_go_on(caplog: pytest.LogCaptureFixture) -> None:
    lock = Lockstep(patience_s=0.05)
    with lock.participant(), caplog.at_level(logging.WARNING, logger="rapport.llm._lockstep"):
        lock.wait_quiet()  # returns although the participant never waited
        assert lock.running == 1
    assert "batching goes on without it" in caplog.text


def test_call_keys_nest_and_reset() -> None:
    assert current_key() is None
    with call_key(3):
        assert current_key() == 3
        with call_key(7):
            assert current_key() == 7
        assert current_key() == 3
    assert current_key() is None
