"""The prompts of MSC's session: our packaged wording (the default), or MultiSessionCollab's
own, read at run time from a checkout the user supplies (never copied into rapport).

A checkout holds them as Python string constants in ``collaborativeagents/prompts.py``, and
each dataset's task line in ``datasets_info`` of ``collaborativeagents/datasets/__init__.py``.
Both files are parsed, never run: only string literals assigned at module level are read.
"""

from __future__ import annotations

import ast
import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from rapport._pysource import PySourceError, parse, string_constants

from ._types import Problem

PROMPTS_FILE = "collaborativeagents/prompts.py"
"""Where a MultiSessionCollab checkout keeps its prompts."""
DATASETS_FILE = "collaborativeagents/datasets/__init__.py"
"""Where a MultiSessionCollab checkout keeps each dataset's task line (``datasets_info``)."""
MSC_NAMES = {
    "agent": "agent_system_prompt_no_json",
    "agent_notes": "reflective_agent_system_prompt_no_json",
    "direct": "agent_system_prompt_no_user_no_json",
    "user": "user_system_prompt_profile_with_preferences",
    "user_plain": "user_system_prompt_profile_without_preferences",
    "judge": "accuracy_prompt_qa",
    "end_token": "termination_signal",
}
"""Our part -> the constant of ``prompts.py`` that MSC's code uses for it (its collaborator
without JSON, without and with notes on the user, its one-shot solver (Table 3's S1), its
user with and without preferences, its judge, its end signal)."""
MSC_JSON_NAMES = {
    "agent": "agent_system_prompt",
    "agent_notes": "reflective_agent_system_prompt",
    "direct": "agent_system_prompt_no_user",
}
"""The collaborator's prompts on MSC's JSON path (its code's path for Llama-3.3-70B-Instruct):
each asks for one JSON object whose ``response`` is the message."""
_MSC_FIELDS = {
    "agent": {"max_tokens": "max_new_tokens"},
    "direct": {"max_tokens": "max_new_tokens"},
    "agent_notes": {"max_tokens": "max_new_tokens", "notes": "agent_notes"},
    "user": {
        "task": "user_task_description",
        "problem": "problem",
        "persona": "user_persona",
        "preferences": "user_preferences",
        "end_token": "termination_signal",
    },
    "judge": {"problem": "problem", "reference": "correct_answer", "draft": "draft_answer"},
}
"""Our field -> the field MSC's template names (what its code passes to ``format``)."""
_REQUIRED = {
    "user": {"problem"},
    "judge": {"problem", "correct_answer", "draft_answer"},
    "agent_notes": {"agent_notes"},
}
"""Fields a template must use: without them the user, the judge or the agent never sees its
input."""
_TASK_FALLBACK = {"math": "math-500", "choice": "mmlu"}
"""The task line of a problem from no MSC dataset: MSC's line for its kind of problem."""
_DOMAINS = {"logiqa": "logical reasoning", "medqa": "medical", "mmlu": "multiple-choice"}
MSC_END_TOKEN = "TERMINATE"
"""What MSC's user writes in its response to end the conversation."""
PACKAGED = "packaged"
"""How reports name our own prompts."""
_NOT_A_CHECKOUT = "prompts_from takes a MultiSessionCollab checkout"


class MscPromptsError(ValueError):
    """A checkout's prompts cannot be read (missing file, constant or template field)."""


@dataclass(frozen=True)
class Template:
    """One prompt: its text and the names of its fields.

    Attributes:
        name: what the prompt is called where it comes from (a packaged file's stem, or the
            constant of MSC's ``prompts.py``).
        text: a ``str.format`` template.
        fields: our field name -> the name the template uses (absent: the same).
    """

    name: str
    text: str
    fields: Mapping[str, str] = field(default_factory=dict)

    def render(self, **values: str) -> str:
        """The prompt with `values` (given by our field names) filled in."""
        return self.text.format(**{self.fields.get(k, k): v for k, v in values.items()})


@dataclass(frozen=True)
class SessionPrompts:
    """The agent's, the user's and the judge's prompts of an ``msc`` session.

    Attributes:
        agent: the collaborator's system prompt (field ``max_tokens``).
        agent_notes: the collaborator's system prompt when memory has something to say
            about the user (``max_tokens``, ``notes``); None: `agent`, then the memory's
            text under its own heading.
        user: the user's, for a user with preferences (``task``, ``problem``, ``persona``,
            ``preferences``, ``end_token``).
        user_plain: the user's for a user without preferences; None: `user`, told it has
            none in particular.
        judge: the grader's (``problem``, ``reference``, ``draft``).
        end_token: what the user writes to end the conversation.
        tasks: dataset -> the line that tells the user what kind of problem it brings;
            empty: our own line.
        checkout: the MultiSessionCollab checkout they were read from (None: ours).
        direct: the one-shot solver's system prompt (``max_tokens``); None: our own.
        agent_format: ``json``: the collaborator answers one JSON object whose
            ``response`` is its message (MSC's path for Llama-3.3-70B-Instruct).
        source: where the prompts were read: ``packaged``, or MSC's ``prompts.py`` with its
            sha256.
    """

    agent: Template
    user: Template
    user_plain: Template | None
    judge: Template
    end_token: str
    tasks: Mapping[str, str] = field(default_factory=dict)
    source: str = PACKAGED
    agent_notes: Template | None = None
    checkout: str | None = None
    direct: Template | None = None
    agent_format: Literal["text", "json"] = "text"

    @property
    def packaged(self) -> bool:
        """Whether these are our own prompts."""
        return self.source == PACKAGED

    def task_line(self, problem: Problem) -> str:
        """One line saying what kind of problem the user brings (from its dataset)."""
        dataset = problem.source.split("/")[0].lower()
        if self.tasks:
            kind = "choice" if problem.choices else "math"
            key = dataset.replace("_", "-")
            return self.tasks.get(key) or self.tasks[_TASK_FALLBACK[kind]]
        kind = _DOMAINS.get(dataset, "multiple-choice" if problem.choices else "math")
        return f"Solve this {kind} problem together with the assistant:"

    def describe(self, used: list[Template]) -> str:
        """What a session ran, for its outcome: ``""`` for our prompts, else the source and
        the names of the prompts it read from there."""
        if self.packaged:
            return ""
        names = ", ".join(t.name for t in used)
        return f"{self.source}: {names}" if names else ""


def _packaged(name: str) -> str:
    return resources.files("rapport.envs.collab").joinpath(f"prompts/{name}.md").read_text()


@cache
def packaged_prompts() -> SessionPrompts:
    """Our own wording of MSC's prompts (the default)."""
    return SessionPrompts(
        agent=Template("msc_agent", _packaged("msc_agent")),
        user=Template("msc_user", _packaged("msc_user")),
        user_plain=Template("msc_user_plain", _packaged("msc_user_plain")),
        judge=Template("grade", _packaged("grade")),
        end_token=MSC_END_TOKEN,
    )


def load_msc_prompts(
    checkout: str | Path, agent_format: Literal["text", "json"] = "text"
) -> SessionPrompts:
    """MSC's own prompts, read from a MultiSessionCollab checkout; with ``agent_format``
    ``json``, its collaborator's JSON prompts (`MSC_JSON_NAMES`).

    Raises:
        MscPromptsError: the checkout lacks ``prompts.py`` or the datasets file, a constant
            MSC's code uses, or a template uses a field MSC's code does not pass.
    """
    root = Path(checkout).expanduser()
    if not root.is_dir():
        raise MscPromptsError(f"{checkout}: not a folder ({_NOT_A_CHECKOUT})")
    path = root / PROMPTS_FILE
    constants = string_constants(_parse(path, checkout))
    names = {**MSC_NAMES, **(MSC_JSON_NAMES if agent_format == "json" else {})}
    texts = {part: _constant(constants, name, path) for part, name in names.items()}
    templates = {
        part: _template(part, names[part], texts[part], path)
        for part in ("agent", "agent_notes", "direct", "user", "user_plain", "judge")
    }
    if not texts["end_token"].strip():
        raise MscPromptsError(f"{path}: '{MSC_NAMES['end_token']}' is empty")
    digest = hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest()[:12]
    return SessionPrompts(
        agent=templates["agent"],
        agent_notes=templates["agent_notes"],
        user=templates["user"],
        user_plain=templates["user_plain"],
        judge=templates["judge"],
        end_token=texts["end_token"],
        tasks=_task_lines(root / DATASETS_FILE, checkout),
        source=f"MultiSessionCollab {PROMPTS_FILE} sha256:{digest}",
        checkout=str(checkout),
        direct=templates["direct"],
        agent_format=agent_format,
    )


def _parse(path: Path, checkout: str | Path) -> ast.Module:
    if not path.is_file():
        inside = path.relative_to(Path(checkout).expanduser()).as_posix()
        raise MscPromptsError(f"{checkout}: no {inside} ({_NOT_A_CHECKOUT})")
    try:
        return parse(path)
    except PySourceError as exc:
        raise MscPromptsError(str(exc)) from exc


def _constant(constants: dict[str, object], name: str, path: Path) -> str:
    value = constants.get(name)
    if not isinstance(value, str):
        what = "assigns no string literal to" if name in constants else "has no"
        raise MscPromptsError(f"{path}: {what} '{name}'")
    return value


def _template(part: str, name: str, text: str, path: Path) -> Template:
    """MSC's prompt `name` for `part` as a template, checked: well-formed, no field its code
    does not pass, none it needs missing."""
    kind = part.removesuffix("_plain")
    fields = _MSC_FIELDS[kind]
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise MscPromptsError(f"{path}: '{name}' is not a valid template ({exc})") from exc
    known = set(fields.values())
    unknown = sorted(used - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise MscPromptsError(
            f"{path}: '{name}' uses the field {{{unknown[0]}}}, which MSC's code does not "
            f"fill (it fills: {allowed})"
        )
    missing = sorted(_REQUIRED.get(kind, set()) - used)
    if missing:
        raise MscPromptsError(f"{path}: '{name}' has no {{{missing[0]}}} field")
    return Template(name, text, fields)


def _task_lines(path: Path, checkout: str | Path) -> dict[str, str]:
    """``datasets_info``'s ``task_description`` per dataset (``math-hard`` ... as keyed)."""
    tree = _parse(path, checkout)
    lines: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)):
            continue
        if not any(isinstance(t, ast.Name) and t.id == "datasets_info" for t in node.targets):
            continue
        for key, entry in zip(node.value.keys, node.value.values, strict=True):
            line = _task_description(entry)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and line:
                lines[key.value] = line
    missing = [k for k in _TASK_FALLBACK.values() if k not in lines]
    if missing:
        raise MscPromptsError(f"{path}: 'datasets_info' has no task_description for '{missing[0]}'")
    return lines


def _task_description(entry: ast.expr | None) -> str:
    if not isinstance(entry, ast.Dict):
        return ""
    for key, value in zip(entry.keys, entry.values, strict=True):
        is_line = isinstance(key, ast.Constant) and key.value == "task_description"
        if is_line and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return ""
