"""The same conversations through MultiSessionCollab's own code and through rapport, compared
session by session and message by message: Len, UE, the final draft and TS. Prints one JSON
object (``--table`` also prints a Markdown table).

``--reflection`` plays MSC's reflective collaborator with its per-turn notes pick against
``rapport run collab --memory reflection --prompts-from CHECKOUT``, and compares besides the
notes after every session and every prompt the agent was sent (system prompt and messages,
as a multiset over the run: MSC plays users in parallel).

Both sides talk to one loopback OpenAI-compatible server (127.0.0.1) that replays fixed
replies: the user's, the agent's and the judge's, chosen by the problem and the turn, so any
difference comes from how each side plays and counts a session, never from sampling.

MSC's code is imported from a checkout the user supplies; nothing of it is copied here. It
needs ``litellm`` and ``json_repair`` importable. Its problem loaders import Hugging Face
``datasets`` and its evaluator ``human_eval`` and ``bigcodebench`` at import time, which the
question-answering path never calls: they are stubbed when missing. MSC's evaluator submits
``self.evaluate_conversation``, a method it does not define (it defines
``evaluate_conversation_acc``); the script points the first name at the second, and changes
nothing else.

    python benchmarks/msc_differential.py --checkout PATH/multisessioncollab \\
        [--dataset math-500] [--users 2] [--max-turns 10] [--out DIR] [--table] [--reflection]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import tempfile
import threading
import types
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rapport.cli import main as rapport_main
from rapport.llm._loopback import LoopbackSettings, run_loopback
from rapport.memory import load_msc_notes_prompts
from rapport.store import RunStore

END = "TERMINATE"
RIGHT, WRONG = "DRAFT-RIGHT 42", "DRAFT-WRONG 41"


def turn(response: str, *, enforce: bool | str = False, draft: str = "I don't know") -> str:
    """One user reply: MSC's keys and rapport's, in one JSON object."""
    return json.dumps(
        {
            "preference_1_satisfied": "r",
            "preference_2_satisfied": "r",
            "preference_3_satisfied": "r",
            "preferences": [{"reasoning": "r", "satisfied": not enforce}] * 3,
            "enforce_preferences": enforce,
            "reasoning": "r",
            "draft_answer": draft,
            "should_terminate": END in response,
            "response": response,
        }
    )


CASES: dict[str, dict[str, list[str]]] = {
    "ends-at-once": {"user": [turn(f"(case ends-at-once) never mind. {END}")], "agent": []},
    "clarify-then-solve": {
        "user": [
            turn("(case clarify-then-solve) I have a problem to work out."),
            turn("It is the one with the numbers I gave."),
            turn(f"Great, thanks. {END}", draft=RIGHT),
        ],
        "agent": ["What is the problem?", "The answer is 42."],
    },
    "enforce-then-comply": {
        "user": [
            turn("(case enforce-then-comply) Help me with this."),
            turn("Please use bullet points.", enforce=True),
            turn(f"That works. {END}", draft=RIGHT),
        ],
        "agent": ["The answer is 42.", "- The answer is 42."],
    },
    "runs-to-the-cap": {
        "user": [turn("(case runs-to-the-cap) Can you help?")]
        + [turn("Go on.", enforce=k % 3 == 0, draft=WRONG) for k in range(1, 30)],
        "agent": [f"Step {k}." for k in range(30)],
    },
    "enforces-and-ends": {
        "user": [
            turn("(case enforces-and-ends) A question."),
            turn(f"Not like that. {END}", enforce=True, draft=RIGHT),
        ],
        "agent": ["Here it is: 42."],
    },
    "flag-as-text": {
        "user": [
            turn("(case flag-as-text) A question."),
            turn("Shorter, please.", enforce="True"),
            turn(f"Fine. {END}", draft=""),
        ],
        "agent": ["A long answer.", "42."],
    },
}
NAMES = list(CASES)


def case_of(problem: int, first: int) -> str:
    """The case of the dataset's `problem`-th problem, the cases cycling from `first`."""
    return NAMES[(problem + first) % len(NAMES)]


PICKED = "Answer in bullet points, and keep it short."
"""What the notes pick returns, on both sides."""


def notes_after(case: str, turns: int) -> str:
    """The notes the update returns after a session of `case` with `turns` messages (no case
    marker in it: the agent's case is found by the marker in its conversation)."""
    return f"Notes: after the {case.replace('-', ' ')} session ({turns} messages), use bullets."


class Replay:
    """The loopback server's replies, by role (the request's model name) and turn; with
    `update_opening`, the agent model's notes update and pick too. It keeps every prompt the
    agent was sent, by side (MSC's agent model name, or rapport's)."""

    def __init__(
        self, problems: list[str], update_opening: str | None = None, first: int = 0
    ) -> None:
        self.problems = problems
        self.first = first
        self.update_opening = update_opening
        self.agent_prompts: dict[str, Counter[str]] = {"msc": Counter(), "rapport": Counter()}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        model, messages = str(body.get("model", "")), body.get("messages", [])
        if self.update_opening is not None and "agent" in model:
            memory = self._memory_reply(messages)
            if memory is not None:
                return memory
            side = "rapport" if "rapport" in model else "msc"
            shown = [(str(m.get("role")), str(m.get("content", ""))) for m in messages]
            with self._lock:
                self.agent_prompts[side][json.dumps(shown)] += 1
        if "judge" in model:
            said = " ".join(str(m.get("content", "")) for m in messages)
            return json.dumps({"reasoning": "r", "accuracy": int(RIGHT in said)})
        if "user" in model:
            case = self._case_of_problem(str(messages[0].get("content", "")))
            k = sum(m.get("role") == "assistant" for m in messages)
            replies = CASES[case]["user"]
            return replies[k] if k < len(replies) else turn(f"Thanks. {END}")
        case = self._case_in_chat(messages)
        k = sum(m.get("role") == "user" for m in messages) - 1
        replies = CASES[case]["agent"]
        return replies[k] if 0 <= k < len(replies) else "I have nothing to add."

    def _memory_reply(self, messages: list[dict[str, Any]]) -> str | None:
        """The notes update's or the pick's reply (a lone user message), else None."""
        if len(messages) != 1 or messages[0].get("role") != "user":
            return None
        text = str(messages[0].get("content", ""))
        assert self.update_opening is not None
        if text.startswith(self.update_opening):
            turns = sum(line.startswith(("User: ", "Assistant: ")) for line in text.splitlines())
            return notes_after(self._case_in_chat(messages), turns)
        return json.dumps({"reasoning": "r", "relevant_notes": PICKED})

    def _case_of_problem(self, system: str) -> str:
        for n, problem in enumerate(self.problems):
            if problem.strip()[:300] in system:
                return case_of(n, self.first)
        raise ValueError("no known problem in the user's instructions")

    @staticmethod
    def _case_in_chat(messages: list[dict[str, Any]]) -> str:
        for m in messages:
            text = str(m.get("content", ""))
            for name in NAMES:
                if f"(case {name})" in text:
                    return name
        raise ValueError("no case marker in the agent's conversation")


def stub_missing(names: Sequence[str]) -> None:
    """Empty stand-ins for modules MSC imports but the QA path never calls."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
            module = sys.modules[name]
            for attr in ("load_dataset", "check_correctness", "untrusted_check"):
                setattr(module, attr, None)


def run_msc(checkout: Path, args: argparse.Namespace, url: str, out: Path) -> list[dict[str, Any]]:
    stub_missing(["datasets", "human_eval.execution", "bigcodebench.eval"])
    sys.path.insert(0, str(checkout))
    msc_run = importlib.import_module("run")
    evaluator = importlib.import_module("collaborativeagents.conversation_evaluator")
    cls = evaluator.ConversationEvaluator
    cls.evaluate_conversation = cls.evaluate_conversation_acc
    profiles = json.loads(Path(args.profiles_path).read_text(encoding="utf-8"))[: args.users]
    roles = {r: f"hosted_vllm/msc-{r}" for r in ("user", "agent", "judge")}
    output = out / "msc.jsonl"
    output.unlink(missing_ok=True)
    with open(out / "msc.log", "w") as log, contextlib.redirect_stdout(log):
        msc_run.run_user_profiles(
            dataset_name=args.dataset,
            agent_with_reflection=args.reflection,
            with_proper_scaffolding=args.reflection,
            user_profiles=profiles,
            eval_size=20,
            max_turns=args.max_turns,
            batch_size=4,
            user_model_name=roles["user"],
            user_api_base=url,
            user_api_key="EMPTY",
            collaborator_model_name=roles["agent"],
            collaborator_api_base=url,
            collaborator_api_key="EMPTY",
            judge_model_name=roles["judge"],
            judge_api_base=url,
            judge_api_key="EMPTY",
            output_file=str(output),
        )
    return [json.loads(line) for line in output.read_text().splitlines() if line.strip()]


def run_rapport(
    args: argparse.Namespace, url: str, out: Path
) -> tuple[list[Any], dict[tuple[str, int], str]]:
    """rapport's sessions, and each user's notes after each version learned."""
    run_dir = out / "rapport"
    argv = ["run", "collab", "--problems", str(args.cache_folder), "--profiles", args.profiles_path]
    argv += ["--users", str(args.users), "--sessions", "20", "--max-turns", str(args.max_turns)]
    argv += ["--run-dir", str(run_dir), "--no-progress", "--no-cache"]
    argv += ["--concurrency", str(args.concurrency)]
    if args.reflection:
        # The memory role is left to its default, the agent's model (MSC's collaborator
        # writes and picks its own notes).
        argv += ["--memory", "reflection", "--prompts-from", str(args.checkout)]
        argv += ["--model", f"agent=openai/rapport-agent,base_url={url}"]
    else:
        argv += ["--memory", "none", "--model", f"agent=openai/msc-agent,base_url={url}"]
    for role in ("user", "judge"):
        argv += ["--model", f"{role}=openai/msc-{role},base_url={url}"]
    os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
    with open(out / "rapport.log", "w") as log, contextlib.redirect_stdout(log):
        code = rapport_main(argv)
    if code != 0:
        raise SystemExit(f"rapport run exited {code}")
    with RunStore.open_readonly(run_dir) as store:
        records = list(store.sessions())
        notes = {
            (v.user_id, v.version): " ".join(i.text for i in v.state.items)
            for v in store.memory_versions()
            if args.reflection
        }
    return records, notes


def msc_rows(results: list[dict[str, Any]], problems: list[str]) -> dict[tuple[int, int], Any]:
    rows = {}
    for user in results:
        notes = {
            problems.index(g["sample"]["problem"]): (g.get("agent_notes") or {}).get("agent_notes")
            for g in user.get("generated_conversations", [])
        }
        for conv in user["evaluation"]["evaluated_conversations"]:
            index = problems.index(conv["sample"]["problem"])
            flags = [m.get("enforce_preferences") for m in conv["full_conversation_log"]]
            rows[(user["i"], index)] = {
                "Len": conv["evaluation"]["conversation_length"],
                "UE": sum(f is True or f == "True" for f in flags),
                "draft": conv["evaluation"]["final_answer"],
                "TS": float(conv["evaluation"]["accuracy"]["accuracy"]),
                "texts": [str(m["content"]) for m in conv["conversation"]],
                "notes": notes.get(index),
            }
    return rows


def rapport_rows(
    records: list[Any], notes: dict[tuple[str, int], str]
) -> dict[tuple[int, int], Any]:
    from rapport.envs.collab import CollabBenchmark

    bench = CollabBenchmark([])
    rows = {}
    for r in records:
        scores = bench.score(r) if r.status == "ok" else {}
        rows[(int(r.user_id.split("-")[1]), r.index)] = {
            "Len": scores.get("Len"),
            "UE": scores.get("UE"),
            "draft": r.outcome.draft if r.outcome is not None else None,
            "TS": scores.get("TS"),
            "texts": [t.text for t in r.turns],
            "notes": notes.get((r.user_id, r.index + 1)),
        }
    return rows


def compare(msc: dict[Any, Any], ours: dict[Any, Any], first: int) -> dict[str, Any]:
    fields = ("Len", "UE", "draft", "TS", "texts", "notes")
    keys = sorted(set(msc) | set(ours))
    equal = {f: 0 for f in fields}
    differing = []
    by_case: dict[str, dict[str, float]] = {}
    for key in keys:
        a, b = msc.get(key), ours.get(key)
        if a is None or b is None:
            differing.append({"session": key, "missing_in": "msc" if a is None else "rapport"})
            continue
        bad = [
            f
            for f in fields
            if (a[f] != b[f] if f in ("draft", "texts", "notes") else float(a[f]) != float(b[f]))
        ]
        for f in fields:
            equal[f] += f not in bad
        if bad:
            differing.append(
                {
                    "session": key,
                    "fields": bad,
                    "msc": {f: a[f] for f in bad if f != "texts"},
                    "rapport": {f: b[f] for f in bad if f != "texts"},
                }
            )
        case = case_of(key[1], first)
        by_case.setdefault(case, {"sessions": 0, "Len": a["Len"], "UE": a["UE"], "TS": a["TS"]})
        by_case[case]["sessions"] += 1
    return {
        "sessions": len(keys),
        "first_case": first,
        "equal": equal,
        "differing": differing,
        "cases": by_case,
    }


def compare_prompts(prompts: dict[str, Counter[str]]) -> dict[str, Any]:
    """Every prompt the agent was sent, MSC's against rapport's (as multisets)."""
    msc, ours = prompts["msc"], prompts["rapport"]
    only_msc, only_ours = msc - ours, ours - msc
    return {
        "msc": sum(msc.values()),
        "rapport": sum(ours.values()),
        "equal": sum((msc & ours).values()),
        "only_msc": [json.loads(k) for k in list(only_msc)[:3]],
        "only_rapport": [json.loads(k) for k in list(only_ours)[:3]],
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        "| case | sessions | MSC Len | MSC UE | MSC TS "
        "| rapport equal on Len, UE, draft, TS, messages |",
        "|---|---|---|---|---|---|",
    ]
    bad = {tuple(d["session"]) for d in result["differing"]}
    for case, row in result["cases"].items():
        keys = [k for k in bad if case_of(k[1], result["first_case"]) == case]
        verdict = "yes" if not keys else f"no ({len(keys)} sessions)"
        lines.append(
            f"| {case} | {row['sessions']} | {row['Len']} | {row['UE']} | {row['TS']} | {verdict} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", required=True, help="a MultiSessionCollab checkout")
    parser.add_argument("--dataset", default="math-500")
    parser.add_argument("--users", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=10)
    parser.add_argument("--out", default=None, help="where both runs go (default: a temp dir)")
    parser.add_argument("--concurrency", type=int, default=1, help="rapport's --concurrency")
    parser.add_argument("--table", action="store_true")
    parser.add_argument(
        "--reflection",
        action="store_true",
        help="MSC's reflective agent with its notes pick vs rapport's reflection on MSC's prompts",
    )
    args = parser.parse_args(argv)
    checkout = Path(args.checkout)
    root = checkout / "collaborativeagents"
    args.cache_folder = root / "datasets" / "cache" / args.dataset.replace("math-hard", "math_hard")
    args.profiles_path = str(root / "user_profiles" / "user_profiles.json")
    cache_file = args.cache_folder / "testset_size20_seed42.json"
    if not cache_file.is_file():
        print(f"msc_differential: {cache_file} not found (give a MSC checkout)", file=sys.stderr)
        return 2
    problems = [row["problem"] for row in json.loads(cache_file.read_text(encoding="utf-8"))]
    out = Path(args.out or tempfile.mkdtemp(prefix="msc-diff-"))
    out.mkdir(parents=True, exist_ok=True)
    settings = LoopbackSettings(latency_s=0.0, idle_timeout_s=600.0)
    opening = load_msc_notes_prompts(checkout).update.split("\n", 1)[0] if args.reflection else None
    first = 1 if args.reflection else 0  # the first session talks: the pick on empty notes
    replay = Replay(problems, opening, first)
    with run_loopback(settings, responder=replay) as server:
        msc = msc_rows(run_msc(checkout, args, server.base_url, out), problems)
        ours = rapport_rows(*run_rapport(args, server.base_url, out))
    result = {
        "dataset": args.dataset,
        "max_turns": args.max_turns,
        "reflection": args.reflection,
        **compare(msc, ours, first),
    }
    if args.reflection:
        result["agent_prompts"] = compare_prompts(replay.agent_prompts)
    print(json.dumps(result, indent=1, default=str))
    if args.table:
        print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
