"""Tool-use accuracy as PrefIx scores it (the share of the reference calls the agent made),
and bfcl-eval's per-turn pass/fail beside it, on our executor.

Accuracy is the share of ground-truth calls the trial made, unordered and counted with
duplicates (PrefIx's ``gt_coverage``, the paper's tool-use accuracy, Section 3.4.1). By
default calls are matched as PrefIX's ``multi_turn_checker_ratio`` matches them: each
call the agent made is written ``name(k=repr(v),...)`` in the agent's argument order (as
bfcl's ``convert_to_function_call`` decodes it), spaces around ``(``, ``)``, ``,`` and
``=`` are removed from it and from the reference string, and the strings must be equal;
every decoded call counts, run or not. ``matching="canonical"`` is rapport's matching
instead: positional arguments bound to their names, keywords sorted, values compared.

``bfcl_pass`` walks the ground truth turn by turn, as bfcl-eval's
``multi_turn_checker`` does: the trial's calls of turn t run on fresh backends, the
reference calls of turn t on others; a turn whose reference is not empty fails when the
trial made no call in it; otherwise bfcl's state check compares the backends and bfcl's
response check looks for turn t's reference responses among every response so far. The
first failing turn fails the task (``bfcl_pass`` 0), so doing every call in the last turn
(or the first) fails as it does in bfcl-eval.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ._executor import ExecutionResult, SafeExecutor, parse_call
from ._tasks import INSTALL_HINT, BfclTask


class Accuracy(BaseModel):
    """A trial against the reference: the share of its calls made, and bfcl's turns."""

    accuracy: float
    """PrefIx's tool-use accuracy: reference calls the trial also made (unordered, with
    duplicates), over all of them."""
    bfcl_pass: float
    """bfcl-eval's multi-turn verdict: 1.0 when every turn passes, else 0.0."""
    turns: int
    """Turns of the ground truth."""
    turns_passed: int
    """Turns checked before the first failure (all of them when the task passes)."""
    error_type: str | None = None
    """bfcl's error type of the first failing turn (``multi_turn:empty_turn_model_response``,
    ``multi_turn:instance_state_mismatch``, ``multi_turn:execution_response_mismatch``)."""
    failed_turn: int | None = None
    matched: int
    reference: int
    missing: list[str] = Field(default_factory=list)
    """Reference calls the trial never made."""
    matching: str = "canonical"
    """How calls were matched: ``prefix`` (PrefIX's normalised strings) or ``canonical``
    (bound, sorted arguments; records stored before the choice existed)."""

    @property
    def success(self) -> bool:
        """The task passed bfcl-eval's multi-turn check."""
        return self.bfcl_pass == 1.0

    @model_validator(mode="before")
    @classmethod
    def _stored_before_bfcl_pass(cls, data: Any) -> Any:
        """A record stored with ``accuracy`` as bfcl's verdict and ``coverage`` beside it."""
        if isinstance(data, dict) and "coverage" in data and "bfcl_pass" not in data:
            rest = {k: v for k, v in data.items() if k != "coverage"}
            data = rest | {"bfcl_pass": data.get("accuracy", 0.0), "accuracy": data["coverage"]}
        return data


def _bfcl_checks() -> tuple[Any, Any]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(INSTALL_HINT) from exc
    return multi_turn_checker.state_checker, multi_turn_checker.response_checker


def replay_turns(task: BfclTask, turns: Sequence[Sequence[str]]) -> SafeExecutor:
    """Fresh instances with call strings run turn by turn (no failures)."""
    executor = SafeExecutor(task, track_writes=False)
    for index, calls in enumerate(turns):
        executor.turn = index
        for call in calls:
            executor.run(call)
    return executor


def replay_reference(task: BfclTask) -> SafeExecutor:
    """Fresh instances with the task's reference calls run on them, turn by turn."""
    return replay_turns(task, task.ground_truth)


def _executed(call: ExecutionResult) -> bool:
    return not call.refused and not call.injected


Matching = Literal["prefix", "canonical"]


def check_accuracy(task: BfclTask, trial: SafeExecutor, matching: Matching = "prefix") -> Accuracy:
    """Score a trial's calls (each tagged with its turn) against the task's ground truth."""
    state_checker, response_checker = _bfcl_checks()
    calls = [c for c in trial.log if _executed(c)]
    model = SafeExecutor(task, track_writes=False)
    reference = SafeExecutor(task, track_writes=False)
    seen: list[str] = []
    passed, error, failed = 0, None, None
    last = len(task.ground_truth) - 1
    for index, truth in enumerate(task.ground_truth):
        model.turn = reference.turn = index
        # Calls made after the last turn count in the last one.
        mine = [c for c in calls if c.turn == index or (index == last and c.turn > last)]
        seen += [model.call(c.name, c.arguments).result for c in mine]
        expected = [reference.run(call).result for call in truth]
        if not truth:
            passed += 1
            continue
        if not mine:
            error = "multi_turn:empty_turn_model_response"
        elif not state_checker(model.instances, reference.instances)["valid"]:
            error = "multi_turn:instance_state_mismatch"
        elif not response_checker(seen, expected, index)["valid"]:
            error = "multi_turn:execution_response_mismatch"
        if error:
            failed = index
            break
        passed += 1
    if matching == "prefix":
        decoded = [prefix_call_string(c.name, c.arguments) for c in trial.log if c.name != "?"]
        matched, missing = ratio_coverage(task.reference_calls, decoded)
    else:
        matched, missing = _coverage(task, model, calls)
    total = len(task.reference_calls)
    return Accuracy(
        accuracy=matched / total if total else 0.0,
        bfcl_pass=0.0 if error else 1.0,
        turns=len(task.ground_truth),
        turns_passed=passed,
        error_type=error,
        failed_turn=failed,
        matched=matched,
        reference=total,
        missing=[m[:200] for m in missing],
        matching=matching,
    )


def prefix_call_string(name: str, arguments: dict[str, Any]) -> str:
    """A decoded call as bfcl writes it: ``name(k=repr(v),...)`` in the given order."""
    return f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"


_SPACED = [(re.compile(r"\s*,\s*"), ","), (re.compile(r"\(\s*"), "("), (re.compile(r"\s*\)"), ")")]
_EQUALS = (re.compile(r"\s*=\s*"), "=")


def normalise_call(text: str) -> str:
    """PrefIX's normalisation of a call string: trimmed, no spaces around ``,``, ``(``,
    ``)`` or ``=`` (inside string values too, as there)."""
    text = text.strip()
    for pattern, replacement in [*_SPACED, _EQUALS]:
        text = pattern.sub(replacement, text)
    return text


def ratio_coverage(reference: Sequence[str], made: Sequence[str]) -> tuple[int, list[str]]:
    """(reference calls matched, missing) as PrefIX's ``compute_unordered_coverage``
    counts them over normalised strings: unordered, with duplicates."""
    wanted = Counter(normalise_call(c) for c in reference if c.strip())
    have = Counter(normalise_call(c) for c in made if c.strip())
    matched = sum(min(have[k], n) for k, n in wanted.items())
    missing = [k for k, n in wanted.items() for _ in range(n - have.get(k, 0))]
    return matched, missing


def _canonical(executor: SafeExecutor, name: str, args: tuple[Any, ...], kwargs: Any) -> str:
    """A call as ``name(k=v, ...)``, positional arguments bound to their names, sorted."""
    method = executor.methods.get(name)
    bound = dict(kwargs)
    if method is not None:
        try:
            bound = dict(inspect.signature(method).bind_partial(*args, **kwargs).arguments)
        except TypeError:
            bound = {**{f"_{i}": a for i, a in enumerate(args)}, **dict(kwargs)}
    return f"{name}({', '.join(f'{k}={bound[k]!r}' for k in sorted(bound))})"


def _coverage(
    task: BfclTask, executor: SafeExecutor, calls: Sequence[ExecutionResult]
) -> tuple[int, list[str]]:
    """(reference calls matched, reference calls missing), unordered, with duplicates."""
    truth = []
    for text in task.reference_calls:
        parsed = parse_call(text)
        truth.append(_canonical(executor, parsed.name, parsed.args, parsed.kwargs))
    made = Counter(_canonical(executor, c.name, (), c.arguments) for c in calls)
    wanted = Counter(truth)
    matched = sum(min(made[k], n) for k, n in wanted.items())
    missing = [k for k, n in wanted.items() for _ in range(n - made.get(k, 0))]
    return matched, missing
