"""The lockstep that makes batched decoding repeat: participants, keys, quiet waits."""

from __future__ import annotations

import threading
import time

from rapport.llm._lockstep import Lockstep, call_key, current_key


def test_quiet_only_when_every_participant_waits() -> None:
    lock = Lockstep(patience_s=5)
    order: list[str] = []
    with lock.participant(), lock.participant():
        lock.waiting()  # one participant submitted a call

        def engine() -> None:
            lock.wait_quiet()
            order.append("step")

        thread = threading.Thread(target=engine)
        thread.start()
        time.sleep(0.1)
        order.append("second submits")
        lock.waiting()
        thread.join(5)
        assert order == ["second submits", "step"]
        lock.resumed()
        lock.resumed()


def test_patience_lets_the_engine_go_on() -> None:
    lock = Lockstep(patience_s=0.05)
    with lock.participant():
        started = time.perf_counter()
        lock.wait_quiet()
        assert time.perf_counter() - started < 2


def test_call_keys_nest_and_reset() -> None:
    assert current_key() is None
    with call_key(3):
        assert current_key() == 3
        with call_key(7):
            assert current_key() == 7
        assert current_key() == 3
    assert current_key() is None
