"""How long a participant waits in ``rapport study`` on a real model: one participant plays
the three sessions of their first block (coding with ``reflection``) of the example design
over HTTP, as the page does (message -> the reply streamed on the event stream; survey ->
session saved, which covers the memory's learning), against ``rapport study serve`` in its
own process.

Prints one JSON object: per session, each reply's wait in seconds until its first streamed
piece (the first ``delta`` event) and until the whole reply was stored (its ``message``
event), the wait after the survey until the session was committed, and the agent's reply
lengths. ``--model`` names the model of every role (``scripted/auto`` checks the script
without model time).

    python benchmarks/study_reply_time.py [--model llamacpp/qwen2.5-coder-0.5b]

Only one llama.cpp process should run on a machine at a time: hold the lock the test suite
takes (``rapport-llama.lock`` in the temporary directory, with ``flock``) around it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from rapport.study import StudyDB, create_study

DESIGN = Path(__file__).parents[1] / "docs" / "study-design.yaml"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')
_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")
MESSAGES = [
    ["Where is the bug? Please answer in numbered steps.", "Show me the fixed function."],
    ["How should I start? Numbered steps, one at a time.", "What is the next step?"],
    ["What classes do I need?", "How is a return processed?"],
]


def _reply(
    client: httpx.Client, path: str, after: int, start: float, limit_s: float
) -> tuple[dict[str, object], float | None]:
    """The agent's reply after message ``after``, and the seconds from ``start`` to its
    first streamed piece (None: it came whole, with no ``delta`` event)."""
    deadline = time.monotonic() + limit_s
    first: float | None = None
    while time.monotonic() < deadline:
        with client.stream("GET", f"{path}/events?after={after}") as stream:
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "delta" and first is None:
                    if json.loads(line[6:])["seq"] == after + 1:
                        first = time.perf_counter() - start
                elif line.startswith("data: ") and kind == "message":
                    body = json.loads(line[6:])
                    if body["speaker"] == "agent":
                        return dict(body), first
    raise SystemExit(f"no reply within {limit_s}s")


def _session(client: httpx.Client, base: str, pos: int, texts: list[str]) -> dict[str, object]:
    path = f"{base}/s/{pos}"
    csrf = _CSRF.search(client.get(path).text).group(1)  # type: ignore[union-attr]
    waits, firsts, lengths = [], [], []
    for text in texts:
        start = time.perf_counter()
        form = {"csrf": csrf, "text": text}
        sent = client.post(f"{path}/message", data=form, headers={"accept": "application/json"})
        sent.raise_for_status()
        reply, first = _reply(client, path, sent.json()["stored"], start, 900)
        waits.append(round(time.perf_counter() - start, 2))
        firsts.append(None if first is None else round(first, 2))
        lengths.append(len(str(reply["text"])))
    client.post(f"{path}/end", data={"csrf": csrf})
    start = time.perf_counter()
    ratings = {i: "4" for i in ("adherence", "memory", "confidence", "satisfaction")}
    ratings["impact"] = "followed_helped"
    client.post(f"{path}/survey", data={"csrf": csrf, **ratings})
    while "This session is complete" not in client.get(path).text:
        time.sleep(0.5)
    saved = round(time.perf_counter() - start, 2)
    return {
        "session": pos,
        "first_piece_wait_s": firsts,
        "reply_wait_s": waits,
        "saved_after_survey_s": saved,
        "reply_chars": lengths,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="llamacpp/qwen2.5-coder-0.5b", help="every role's model spec"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rapport-study-time-") as tmp:
        made = create_study(DESIGN, 4, Path(tmp) / "study", models={"all": args.model})
        db = StudyDB(made.study_dir)
        who = next(
            a
            for a in db.assignments()
            if a.order[0] == "reflection" and a.study_types[0] == "coding"
        )
        db.close()
        proc = subprocess.Popen(
            [sys.executable, "-m", "rapport", "study", "serve", str(made.study_dir), "--port", "0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            found = _URL.search(proc.stderr.readline())
            if not found:
                raise SystemExit("the study server did not start")
            client = httpx.Client(base_url=f"http://127.0.0.1:{found.group(1)}", timeout=900)
            base = f"/p/{made.tokens[who.participant]}"
            csrf = _CSRF.search(client.get(base).text).group(1)  # type: ignore[union-attr]
            client.post(f"{base}/consent", data={"csrf": csrf, "agree": "yes"})
            sessions = []
            for pos in (1, 2, 3):
                sessions.append(_session(client, base, pos, MESSAGES[pos - 1]))
                print(json.dumps(sessions[-1]), file=sys.stderr, flush=True)  # as it goes
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    print(
        json.dumps({"model": args.model, "condition": "reflection", "sessions": sessions}, indent=2)
    )


if __name__ == "__main__":
    main()
