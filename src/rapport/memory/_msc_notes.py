"""Reflection notes as MultiSessionCollab writes and retrieves them: one free-text notes
document per user, rewritten after each session from the whole conversation; the whole
document opens every session, and before every agent reply a call picks the notes that bear
on it. Nothing is capped.

The prompts are our own wording, or MSC's own read from a checkout the user supplies
(`load_msc_notes_prompts`): its ``update_agent_notes_prompt`` and
``proper_scaffolding_prompt`` from ``collaborativeagents/prompts.py``, and the line its
collaborator puts before the picked notes, from ``collaborativeagents/agents/
collaborator_agent.py``. Both files are parsed, never run.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from rapport._pysource import PySourceError, fstring_prefixes, parse, string_constants
from rapport.llm import (
    GenerateConfig,
    Message,
    Model,
    OutputValidationError,
    parse_json_output,
    stable_hash,
)
from rapport.log import MemoryItem, MemoryState, Provenance, SessionRecord

NOTES_CONFIG = GenerateConfig(temperature=1.0, max_tokens=2048)
"""MSC writes and picks notes with the agent's own sampling (temperature 1.0, 2048 tokens)."""
NOTES_ID = "notes"
PROMPTS_FILE = "collaborativeagents/prompts.py"
AGENT_FILE = "collaborativeagents/agents/collaborator_agent.py"
_UPDATE = (
    "update_agent_notes_prompt",
    {"notes": "agent_notes", "conversation": "conversation_str"},
)
_SELECT = (
    "proper_scaffolding_prompt",
    {"conversation": "conversation_history", "notes": "complete_agent_notes"},
)
"""MSC's constant -> our field -> the field its code fills."""
_RECALL_AT = ("add_scaffolding_to_conversation", "scaffolded_notes")
"""Where MSC's collaborator writes the line before the picked notes: the f-string in this
method whose first substitution is this name."""
PACKAGED = "packaged"
_NOT_A_CHECKOUT = "prompts_from takes a MultiSessionCollab checkout"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class MscNotesPromptsError(ValueError):
    """A checkout's notes prompts cannot be read (missing file, constant or field)."""


@dataclass(frozen=True)
class NotesPrompts:
    """The three texts of MSC-form reflection.

    Attributes:
        update: the notes update (fields ``notes``, ``conversation``).
        select: the per-turn pick (``conversation``, ``notes``).
        recall: what goes before the picked notes in the agent's prompt (``notes``).
        fields: our field -> the template's name for it (absent: the same).
        raw_notes: the update's whole reply is the new notes (MSC's code, for every agent
            model but Llama-3.3-70B); False: the reply's ``notes`` field.
        source: ``packaged``, or MSC's prompts file (the session's prompts table names its
            sha256).
    """

    update: str
    select: str
    recall: str
    fields: dict[str, dict[str, str]]
    raw_notes: bool
    source: str

    def render(self, part: Literal["update", "select", "recall"], **values: str) -> str:
        """`part` with `values` filled in: MSC's as its code fills them (``str.format``),
        ours in one pass that leaves other braces as they are."""
        text = {"update": self.update, "select": self.select, "recall": self.recall}[part]
        if self.source == PACKAGED:
            return fill(text, values)
        names = self.fields.get(part, {})
        return text.format(**{names.get(k, k): v for k, v in values.items()})


class NotesUpdate(BaseModel):
    """The rewritten notes, with the reasoning that led to them."""

    reasoning: str = ""
    notes: str


class NotesSelection(BaseModel):
    """The notes that bear on the next reply."""

    reasoning: str = ""
    relevant_notes: str = ""


def notes_text(state: MemoryState) -> str:
    """The user's notes document ("" before the first session)."""
    return "\n".join(item.text for item in state.items)


def conversation_text(turns: list[tuple[str, str]]) -> str:
    """A conversation as ``Role: text`` lines, the agent as ``Assistant`` (as the agent
    sees it)."""
    return "\n".join(f"{role}: {text}" for role, text in turns)


def record_conversation(record: SessionRecord) -> str:
    """A session's messages for the notes update."""
    names = {"agent": "Assistant", "user": "User"}
    said = [(names[t.speaker], t.text) for t in record.turns if t.speaker in names]
    return conversation_text(said)


async def update_notes(
    model: Model,
    prompts: NotesPrompts,
    state: MemoryState,
    record: SessionRecord,
    *,
    msc_json: bool = False,
    initial: str = "",
) -> None:
    """Rewrite the notes from the session (the previous notes kept on an empty answer);
    `initial` stands for the notes while there are none yet. With `msc_json` (MSC's
    Llama-3.3-70B path), the reply is one JSON object whose ``agent_notes`` are the notes,
    asked again until it parses, up to MSC's 10 attempts.

    Raises:
        ModelError: the model failed (OutputValidationError: no valid notes).
    """
    notes = notes_text(state) or initial
    prompt = prompts.render("update", notes=notes, conversation=record_conversation(record))
    messages = [Message(role="user", content=prompt)]
    if msc_json:
        update = await _msc_json_update(model, messages)
    elif prompts.raw_notes:
        out = await model.generate(messages, config=NOTES_CONFIG)
        update = NotesUpdate(notes=out.text)
    else:
        out = await model.generate(messages, schema=NotesUpdate, config=NOTES_CONFIG)
        update = out.parsed
    if not update.notes.strip():
        return
    # MSC's code keeps its notes as written, edge whitespace included.
    text = update.notes if prompts.raw_notes or msc_json else update.notes.strip()
    source = Provenance(session=record.index, source="reflection")
    state.items = [MemoryItem(id=NOTES_ID, text=text, provenance=[source])]
    state.data["sessions_learned"] = int(state.data.get("sessions_learned", 0)) + 1
    state.data["last_reasoning"] = update.reasoning


MSC_ATTEMPTS = 10
"""How often MSC's code asks for a notes update that parses (``num_retries``)."""
_MSC_NOTES_KEYS = ("user_preferences_reasoning", "agent_notes")


async def _msc_json_update(model: Model, messages: list[Message]) -> NotesUpdate:
    """MSC's JSON notes update: ``agent_notes`` (``str`` of it, as its code keeps it) of the
    first reply that is one JSON object with both of its keys.

    Raises:
        OutputValidationError: no such reply in MSC's attempts.
    """
    for attempt in range(MSC_ATTEMPTS):
        config = NOTES_CONFIG
        if attempt:
            key = stable_hash("msc-notes-again", messages[-1].content, str(attempt))
            config = config.model_copy(update={"seed": int(key[:8], 16)})
        out = await model.generate(messages, config=config)
        try:
            parsed = parse_json_output(out.text)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict) and all(k in parsed for k in _MSC_NOTES_KEYS):
            reasoning = str(parsed["user_preferences_reasoning"])
            return NotesUpdate(reasoning=reasoning, notes=str(parsed["agent_notes"]))
    raise OutputValidationError(
        f"the notes update is not MSC's JSON ({', '.join(_MSC_NOTES_KEYS)}) after "
        f"{MSC_ATTEMPTS} tries"
    )


async def select_notes(
    model: Model, prompts: NotesPrompts, notes: str, conversation: list[Message]
) -> str:
    """The notes that bear on the agent's next reply, as the model picks them.

    Raises:
        ModelError: the model failed (OutputValidationError: no valid selection).
    """
    names = {"assistant": "Assistant", "user": "User"}
    said = [(names[m.role], m.content) for m in conversation if m.role in names]
    prompt = prompts.render("select", conversation=conversation_text(said), notes=notes)
    out = await model.generate(
        [Message(role="user", content=prompt)], schema=NotesSelection, config=NOTES_CONFIG
    )
    selection: NotesSelection = out.parsed
    return selection.relevant_notes


def fill(template: str, values: Mapping[str, object]) -> str:
    """Fill a prompt's ``{placeholders}`` in one pass (braces in the values, and around
    names not given, stay as they are)."""
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
    )


def packaged_notes_prompts(read: Callable[[str], str]) -> NotesPrompts:
    """Our own wording; `read` gives a packaged prompt file's text by name."""
    return NotesPrompts(
        update=read("msc_notes_update.md"),
        select=read("msc_notes_select.md"),
        recall=read("msc_notes_recall.md"),
        fields={},
        raw_notes=False,
        source=PACKAGED,
    )


def load_msc_notes_prompts(checkout: str | Path) -> NotesPrompts:
    """MSC's own notes prompts, read from a MultiSessionCollab checkout.

    Raises:
        MscNotesPromptsError: a file, a constant or the line before the picked notes is
            missing, or a template uses a field MSC's code does not fill.
    """
    root = Path(checkout).expanduser()
    if not root.is_dir():
        raise MscNotesPromptsError(f"{checkout}: not a folder ({_NOT_A_CHECKOUT})")
    path = root / PROMPTS_FILE
    constants = string_constants(_parse(root, PROMPTS_FILE))
    update = _template(constants, *_UPDATE, path)
    select = _template(constants, *_SELECT, path)
    agent = root / AGENT_FILE
    prefixes = fstring_prefixes(_parse(root, AGENT_FILE), *_RECALL_AT)
    if not prefixes:
        method, name = _RECALL_AT
        raise MscNotesPromptsError(
            f"{agent}: '{method}' has no f-string that starts with {{{name}}}'s line"
        )
    return NotesPrompts(
        update=update,
        select=select,
        recall=prefixes[-1].replace("{", "{{").replace("}", "}}") + "{notes}",
        fields={"update": _UPDATE[1], "select": _SELECT[1]},
        raw_notes=True,
        source=f"MultiSessionCollab {PROMPTS_FILE}",
    )


def _parse(root: Path, inside: str) -> ast.Module:
    path = root / inside
    if not path.is_file():
        raise MscNotesPromptsError(f"{root}: no {inside} ({_NOT_A_CHECKOUT})")
    try:
        return parse(path)
    except PySourceError as exc:
        raise MscNotesPromptsError(str(exc)) from exc


def _template(
    constants: Mapping[str, object], name: str, fields: Mapping[str, str], path: Path
) -> str:
    """MSC's constant `name`, checked as a template filled with exactly `fields`."""
    text = constants.get(name)
    if not isinstance(text, str):
        what = "assigns no string literal to" if name in constants else "has no"
        raise MscNotesPromptsError(f"{path}: {what} '{name}'")
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise MscNotesPromptsError(f"{path}: '{name}' is not a valid template ({exc})") from exc
    wanted = set(fields.values())
    if used != wanted:
        odd = sorted(used - wanted) or sorted(wanted - used)
        verb = "uses" if used - wanted else "has no"
        raise MscNotesPromptsError(
            f"{path}: '{name}' {verb} the field {{{odd[0]}}} (MSC's code fills "
            f"{', '.join(sorted(wanted))})"
        )
    return text
