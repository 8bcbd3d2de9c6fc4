"""Per-setting interaction histories for the ``p`` condition: generated, then checked.

Each history is two earlier sessions of the same person on a small file task. In the first
the assistant behaves as a neighbouring setting of the same attribute would (the one that
fits this setting worst) and the person reacts with the setting's implicit remark; in the
second it follows the setting's pattern and the person is content. The history is built
from the pattern by code and checked by the same deterministic alignment the benchmark
scores with: the second session must be fully aligned, the first less so, and nothing the
person says may name the preference.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ._alignment import Step, align
from ._settings import Setting, all_settings, extra_settings, get_tool
from ._simulator import leaked_terms

FAILURE_ATTRIBUTES = frozenset(
    {"tool_abortion", "tool_switching", "error_retry", "error_discovery"}
)

_ARGS = {
    "ls": {},
    "cat": {"file_name": "notes.txt"},
    "mkdir": {"dir_name": "archive"},
    "mv": {"source": "notes.txt", "destination": "archive"},
    "cp": {"source": "notes.txt", "destination": "archive"},
}
_RESULTS = {
    "ls": "notes.txt  report.txt",
    "cat": "Budget review moved to Friday.",
    "mkdir": "None",
    "mv": "None",
    "cp": "None",
}
FAILED = "Error during execution: the service did not respond"
_ANSWERS = {
    "confirmation": "Yes, go ahead.",
    "information_seeking": "Call the folder archive.",
    "disambiguation": "notes.txt, the current one.",
}
CONTENT = "Thanks, that was easy to follow."
REQUESTS = (
    "Could you tidy my workspace and file my notes into a new folder?",
    "Same again in my other workspace, please.",
)


class HistoryError(ValueError):
    """A generated history that fails its own checks."""


def _base(setting: Setting) -> list[Step]:
    """The system calls of the sample task (a failure and its recovery where it matters)."""
    steps = [
        Step(name="ls", interaction=False, params=[], reply=1),
        Step(name="cat", interaction=False, params=["file_name"], reply=1),
        Step(name="mkdir", interaction=False, wrote=True, params=["dir_name"], reply=2),
    ]
    move = ["destination", "source"]
    if setting.attribute not in FAILURE_ATTRIBUTES:
        return [*steps, Step(name="mv", interaction=False, wrote=True, params=move, reply=3)]
    steps.append(Step(name="mv", interaction=False, failed=True, params=move, reply=3))
    if setting.id == "tool_abortion_stop":
        return steps
    again = "cp" if setting.attribute == "tool_switching" else "mv"
    return [*steps, Step(name=again, interaction=False, wrote=True, params=move, reply=4)]


def _ix(tool: str, about: Step | None) -> Step:
    fields = get_tool(tool).fields
    function = about.name if about is not None and "execution_function" in fields else None
    params = about.params if about is not None and tool == "display_params" else None
    return Step(name=tool, interaction=True, function=function, params=params)


def follow(setting: Setting, steps: Sequence[Step]) -> list[Step]:
    """The system calls with the interaction calls the setting's pattern asks for."""
    before: dict[int, list[Step]] = {j: [] for j in range(len(steps) + 1)}
    after: dict[int, list[Step]] = {j: [] for j in range(len(steps))}
    writes = [j for j, s in enumerate(steps) if s.wrote]
    last = len(steps) - 1
    for rule in setting.pattern:
        for j, step in enumerate(steps):
            place = {
                "before_call": (True, True),
                "before_write": (True, step.wrote),
                "before_first_write": (True, bool(writes) and j == writes[0]),
                "before_first_call": (True, j == 0),
                "after_call": (False, True),
                "after_read": (False, not step.wrote and not step.failed),
                "after_failure": (False, step.failed),
                "before_retry": (True, j > 0 and steps[j - 1].failed),
                "after_parallel": (
                    False,
                    (j == last or steps[j + 1].reply != step.reply)
                    and sum(s.reply == step.reply for s in steps) >= 2,
                ),
                "after_first_call": (False, j == 0),
                "at_end": (False, j == last),
                "never": (False, False),
            }[rule.when]
            is_before, wanted = place
            if not wanted:
                continue
            about = None if rule.when in {"before_first_call", "at_end"} else step
            if is_before:
                before[j].append(_ix(rule.tool, about))
            else:
                after[j].append(_ix(rule.tool, about))
    timeline: list[Step] = []
    for j, step in enumerate(steps):
        timeline += [*before[j], step, *after[j]]
    return timeline


def _siblings(setting: Setting) -> list[Setting]:
    every = [*all_settings(), *extra_settings()]
    return [s for s in every if s.attribute == setting.attribute and s.id != setting.id]


def _fit(setting: Setting, timeline: Sequence[Step]) -> float:
    result = align(setting, timeline)
    return result.precision + (1.0 if result.recall is None else result.recall)


@dataclass(frozen=True)
class History:
    """One setting's earlier interactions: what the agent reads under ``p``."""

    setting: str
    first: list[Step]
    """Session 1: the neighbouring behaviour, answered with the setting's remark."""
    second: list[Step]
    """Session 2: the setting followed."""
    remarks: tuple[str, str]

    def render(self) -> str:
        """Both sessions as text."""
        parts = []
        sessions = zip((self.first, self.second), self.remarks, strict=True)
        for n, (timeline, remark) in enumerate(sessions):
            lines = [f"Earlier session {n + 1}", f"Person: {REQUESTS[n]}"]
            lines += [_line(step) for step in timeline]
            lines.append("Assistant: Done.")
            lines.append(f"Person: {remark}")
            parts.append("\n".join(lines))
        return "\n\n".join(parts)


def _line(step: Step) -> str:
    if not step.interaction:
        args = ", ".join(f"{k}={v!r}" for k, v in _ARGS[step.name].items())
        result = FAILED if step.failed else _RESULTS[step.name]
        return f"Assistant runs {step.name}({args}) -> {result}"
    fields = []
    if step.function is not None:
        fields.append(f"execution_function={step.function!r}")
    if step.params is not None:
        fields.append(f"param_names={', '.join(step.params)!r}")
    line = f"Assistant uses {step.name}({', '.join(fields)})"
    answer = _ANSWERS.get(step.name)
    return f"{line}\nPerson: {answer}" if answer else line


def build(setting: Setting) -> History:
    """Generate one setting's history and check it.

    Raises:
        HistoryError: the followed session is not fully aligned, the neighbouring one is
            not worse, or a line of the person names the preference.
    """
    steps = _base(setting)
    second = follow(setting, steps)
    result = align(setting, second)
    if result.precision != 1.0 or result.recall not in (1.0, None):
        raise HistoryError(f"{setting.id}: the followed session scores {result}")
    candidates = [follow(s, _base(setting)) for s in _siblings(setting)] or [list(steps)]
    first = min(candidates, key=lambda t: _fit(setting, t))
    if _fit(setting, first) >= _fit(setting, second):
        raise HistoryError(f"{setting.id}: the neighbouring session is not worse")
    spoken = [setting.feedback, CONTENT, *REQUESTS, *_ANSWERS.values()]
    leaks = [term for line in spoken for term in leaked_terms(line, [setting])]
    if leaks:
        raise HistoryError(f"{setting.id}: the person names the preference: {sorted(set(leaks))}")
    return History(setting.id, first, second, (setting.feedback, CONTENT))


@functools.cache
def history(setting_id: str) -> History:
    """A setting's checked history (built once)."""
    every = {s.id: s for s in [*all_settings(), *extra_settings()]}
    return build(every[setting_id])


def histories(settings: Sequence[Setting]) -> str:
    """The histories of the settings a person holds, as the agent reads them."""
    return "\n\n".join(history(s.id).render() for s in settings)
