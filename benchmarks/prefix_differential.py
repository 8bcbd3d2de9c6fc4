"""PrefIX's own code beside rapport's on the paper's samples: tool-use accuracy on the same
trajectories and the judges' inputs on the same transcripts. Prints one JSON object
(``--table`` also prints a Markdown table).

What is compared, sample by sample, over the published samples (the 31 settings' fixed
tasks in ``Processing/``, their ground truth from the checkout's ``possible_answer``):

- accuracy: PrefIX's ``multi_turn_checker_ratio`` (imported from the checkout) against
  rapport's ``check_accuracy`` with its default matching (``prefix``) and with
  ``canonical``, on the ground truth and on perturbed trajectories (keyword order reversed,
  the first call dropped, a call repeated, spaces added). Each trajectory is a list of
  calls as a model emits them (name and JSON arguments); PrefIX's side decodes them with
  its own ``convert_to_function_call`` where that imports (``--prefix-deps``), rapport's side
  runs them on its executor and scores the calls it logged.
- judge inputs: for each sample's setting, the per-dimension prompt PrefIX's runner builds
  (``_format_transcript`` and ``_build_single_dimension_prompt`` of its
  ``openrouter_judge.py``, imported from the checkout) against the one rapport sends with
  ``--rubric-from`` on the same transcript, for every dimension.

Not compared: PrefIX's handler loop (``inference_multi_turn_FC``). It imports here only
with extra packages (``overrides``, ``tree_sitter`` 0.21.3, ``tree-sitter-java``,
``tree-sitter-javascript``) and with its ``model_handler/api_inference`` package stubbed
(its ``__init__`` imports an ``openrouter`` module the checkout does not hold); driving it
against a replaying loopback server is not built, so messages sent, calls executed and
session ends are not compared.

    python benchmarks/prefix_differential.py --checkout PATH/PrefIX \\
        --task-data PATH/bfcl_eval-2025.6.8-py3-none-any.whl [--prefix-deps DIR] [--table]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from rapport.envs.prefix import check_accuracy, get_setting, parse_call, replay_turns
from rapport.envs.prefix._benchmark import task_categories
from rapport.envs.prefix._checker import prefix_call_string
from rapport.envs.prefix._dimension_judge import DimensionJudge, head_tail, transcript_lines
from rapport.envs.prefix._paper_tasks import open_paper_tasks
from rapport.envs.prefix._rubric import rubric_from
from rapport.envs.prefix._settings import all_settings
from rapport.envs.prefix._task_data import open_task_data
from rapport.envs.prefix._tasks import BfclTask
from rapport.log import Turn

BFCL = "gorilla/berkeley-function-call-leaderboard/bfcl_eval"
Call = tuple[str, dict[str, Any]]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


_DECODE = """
import json, sys
from bfcl_eval.model_handler.utils import convert_to_function_call
batches = json.load(sys.stdin)
decode = lambda calls: convert_to_function_call([{n: a} for n, a in calls])
print(json.dumps([[decode(calls) for calls in b] for b in batches]))
"""


def decode_with_prefix(
    checkout: Path, deps: str | None, batches: list[list[list[Call]]]
) -> tuple[list[list[list[str]]], str]:
    """Each trajectory's calls decoded by PrefIX's ``convert_to_function_call``, run in a
    child process with the checkout's ``bfcl_eval`` first on the path (it shadows the
    installed one there); rapport's writer, with the reason, when that fails."""
    root = checkout / BFCL.rsplit("/", 1)[0]
    path = os.pathsep.join(p for p in (str(root), deps or "") if p)
    done = subprocess.run(
        [sys.executable, "-c", _DECODE],
        input=json.dumps(batches),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )
    if done.returncode == 0:
        return json.loads(done.stdout), "PrefIX's convert_to_function_call"
    reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
    ours = [[[prefix_call_string(n, a) for n, a in calls] for calls in b] for b in batches]
    return ours, f"rapport's prefix_call_string (PrefIX's decoder failed: {reason})"


def _answers(checkout: Path, category: str) -> dict[str, list[list[str]]]:
    path = checkout / BFCL / "data" / "possible_answer" / f"BFCL_v3_multi_turn_{category}.json"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {r["id"]: r["ground_truth"] for r in rows}


def samples(checkout: Path, task_data: str) -> list[tuple[str, str, BfclTask]]:
    """(setting, category, task with PrefIX's ground truth) for every published sample."""
    data = open_task_data(task_data)
    paper = open_paper_tasks(checkout, data)
    answers: dict[str, dict[str, list[list[str]]]] = {}
    out = []
    for setting in all_settings():
        categories = list(task_categories([setting], ["long_context"]))
        fixed = paper.for_setting(setting.id, categories)
        if fixed is None:
            continue
        category = next(c for c in categories if (c, setting.id) in paper.by_file)
        truth = answers.setdefault(category, _answers(checkout, category))
        for task in fixed.tasks:
            own = task.task.model_copy(update={"ground_truth": truth[task.task.id]})
            out.append((setting.id, category, own))
    return out


def _calls(turn: list[str]) -> list[Call]:
    parsed = [parse_call(c) for c in turn]
    return [(p.name, dict(p.kwargs)) for p in parsed]


PERTURB: dict[str, Callable[[list[list[Call]]], list[list[Call]]]] = {
    "ground truth": lambda turns: turns,
    "keywords reversed": lambda turns: [
        [(n, dict(reversed(list(a.items())))) for n, a in t] for t in turns
    ],
    "first call dropped": lambda turns: [turns[0][1:], *turns[1:]] if turns else turns,
    "a call repeated": lambda turns: [[*turns[0], *turns[0][:1]], *turns[1:]] if turns else turns,
}


def trajectories(items: list[tuple[str, str, BfclTask]]) -> list[list[list[Call]]]:
    """Per sample, per perturbation (in `PERTURB`'s order): the calls of each turn."""
    out = []
    for _setting, _category, task in items:
        base = [_calls(t) for t in task.ground_truth]
        out += [perturb(base) for perturb in PERTURB.values()]
    return out


def accuracy_rows(
    items: list[tuple[str, str, BfclTask]],
    turns_of: list[list[list[Call]]],
    decoded: list[list[list[str]]],
    ratio: Any,
) -> list[dict[str, Any]]:
    """Per sample and trajectory: PrefIX's coverage and rapport's, both matchings."""
    rows = []
    names = list(PERTURB)
    for i, (turns, strings) in enumerate(zip(turns_of, decoded, strict=True)):
        setting, _category, task = items[i // len(names)]
        theirs = ratio.multi_turn_checker_ratio(
            [[t] for t in strings], task.ground_truth, {}, "", ""
        )
        trial = replay_turns(task, [[_write(n, a) for n, a in t] for t in turns])
        rows.append(
            {
                "sample": task.id,
                "setting": setting,
                "trajectory": names[i % len(names)],
                "prefix": round(theirs["gt_coverage"], 6),
                "rapport": round(check_accuracy(task, trial).accuracy, 6),
                "rapport_canonical": round(check_accuracy(task, trial, "canonical").accuracy, 6),
            }
        )
    return rows


def _write(name: str, arguments: dict[str, Any]) -> str:
    """A call string rapport's executor parses back to the same name and arguments."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def _transcript(task: BfclTask) -> list[Turn]:
    """A transcript of the sample: a user line and the reference calls, turn by turn."""
    turns, index = [], 0
    for calls in task.ground_truth:
        turns.append(Turn(index=index, speaker="user", text="Please go on with the task."))
        turns.append(Turn(index=index + 1, speaker="agent", text="; ".join(calls)))
        index += 2
    return turns


def judge_rows(checkout: Path, items: list[tuple[str, str, BfclTask]]) -> list[dict[str, Any]]:
    """Per sample and dimension: whether both sides build the same judge prompt."""
    theirs = _load(
        checkout / BFCL / "eval_checker/LLM_as_a_judge/openrouter_judge.py", "prefix_judge"
    )
    rubric = rubric_from(checkout)
    judge = DimensionJudge(rubric.dimensions, rubric.dimension_template())
    rows = []
    for setting_id, _category, task in items:
        turns = _transcript(task)
        persona = rubric.persona([get_setting(setting_id)])
        items_theirs = [
            {
                "turn_id": f"t{t.index}",
                "role": "user" if t.speaker == "user" else "assistant",
                "kind": "user_message" if t.speaker == "user" else "assistant_message",
                "content": t.text,
            }
            for t in turns
        ]
        text, _ = theirs._format_transcript(items_theirs, 8000)
        mine, _ = head_tail(transcript_lines(turns))
        for dimension in rubric.dimensions:
            prompt = theirs._build_single_dimension_prompt(
                persona.name, persona.description, persona.trajectory, text, dimension.id
            )
            sent = judge.prompt(persona, mine, dimension)[-1].content
            rows.append({"sample": task.id, "dimension": dimension.id, "equal": prompt == sent})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Cases, equal and differing per trajectory, with how rapport's differ."""
    out: dict[str, Any] = {}
    for name in PERTURB:
        mine = [r for r in rows if r["trajectory"] == name]
        diff = [r for r in mine if r["prefix"] != r["rapport"]]
        canon = Counter(
            "higher" if r["rapport_canonical"] > r["prefix"] else "lower"
            for r in mine
            if r["rapport_canonical"] != r["prefix"]
        )
        out[name] = {
            "cases": len(mine),
            "equal (default matching)": len(mine) - len(diff),
            "differing (default matching)": len(diff),
            "canonical differing": dict(canon),
            "differing samples": sorted({r["sample"] for r in diff})[:20],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", required=True, help="a PrefIX checkout")
    parser.add_argument("--task-data", required=True, help="bfcl-eval 2025.6.8's wheel (v3)")
    parser.add_argument("--prefix-deps", help="a folder with PrefIX's extra packages")
    parser.add_argument("--table", action="store_true", help="also print a Markdown table")
    args = parser.parse_args(argv)
    checkout = Path(args.checkout)
    ratio = _load(
        checkout / BFCL / "eval_checker/multi_turn_eval/multi_turn_checker_ratio.py", "prefix_ratio"
    )
    items = samples(checkout, args.task_data)
    turns_of = trajectories(items)
    batches = [[[c for t in turns for c in t]] for turns in turns_of]
    flat, decoder = decode_with_prefix(checkout, args.prefix_deps, batches)
    decoded = [[[s for s in b[0]]] for b in flat]
    rows = accuracy_rows(items, turns_of, decoded, ratio)
    judged = judge_rows(checkout, items)
    result = {
        "samples": len(items),
        "decoder": decoder,
        "accuracy": summary(rows),
        "judge_inputs": {
            "cases": len(judged),
            "equal": sum(r["equal"] for r in judged),
            "differing": sum(not r["equal"] for r in judged),
        },
    }
    print(json.dumps(result, indent=2))
    if args.table:
        print("\n| comparison | cases | equal | differing |\n|---|---|---|---|")
        for name, s in result["accuracy"].items():
            equal, differing = s["equal (default matching)"], s["differing (default matching)"]
            print(f"| accuracy, {name} | {s['cases']} | {equal} | {differing} |")
        j = result["judge_inputs"]
        print(f"| judge prompt per dimension | {j['cases']} | {j['equal']} | {j['differing']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
