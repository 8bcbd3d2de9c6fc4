"""The `reflection` memory: after each session the memory model rewrites the user's notes.

A reflection is written in one of two layouts. ``tags`` is the format shared with the GRPO
training of the reflection model: ``<reasoning>...</reasoning>`` followed by ``<notes>`` holding
one ``- note`` per line ``</notes>``. ``json`` asks for the same content as structured output
(``ReflectionOutput``), which llama.cpp decodes under a grammar: small untrained models keep it
where they often lose the tags or ramble to the token limit. A note may end with the turns it
rests on: ``[turns 3, 5]``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Field, PrivateAttr, create_model, model_validator

from rapport.llm import (
    GenerateConfig,
    Invalid,
    Message,
    ModelOutput,
    ModelRoles,
    OutputValidationError,
    ask_again,
)
from rapport.log import MemoryItem, Provenance, SessionRecord

from ._msc_notes import (
    NotesPrompts,
    load_msc_notes_prompts,
    notes_text,
    packaged_notes_prompts,
    select_notes,
    update_notes,
)
from ._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef, pushbacks
from ._reflection_prompt import (
    DEFAULT_MAX_NOTES,
    Layout,
    clip,
    format_transcript,
    prompt_template,
    reflection_messages,
    render,
)

_NOTE_CHARS = 160
_COPY_RUN = 8  # words in a row shared with the conversation that mark a copied note
_MIN_NOTE_WORDS = 2
_REASONING = re.compile(r"<reasoning>(.*?)</reasoning>", re.DOTALL | re.IGNORECASE)
_NOTES = re.compile(r"<notes>(.*?)</notes>", re.DOTALL | re.IGNORECASE)
_NOTE_LINE = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+(.*\S)\s*$")
_TURNS_TAG = re.compile(r"\s*\[\s*turns?\s+([\d,\s and]+)\]\s*$", re.IGNORECASE)
_Note = Annotated[str, Field(max_length=_NOTE_CHARS)]


class ReflectionOutput(BaseModel):
    """The reflection as structured output (the ``json`` layout, and the ``tags`` fallback).

    The length caps become part of the decoding grammar on llama.cpp, so a small model that
    rambles cannot run past the token budget and leave the JSON unterminated; the memory also
    caps the number of notes at its ``max_notes`` (`reflection_schema`).
    """

    reasoning: str = Field(max_length=600)
    """What the person revealed in this conversation, and how it changes the notes."""
    notes: list[_Note]
    """The whole rewritten list, one preference per note."""


@functools.cache
def reflection_schema(max_notes: int) -> type[ReflectionOutput]:
    """`ReflectionOutput` with at most `max_notes` notes."""
    return create_model(  # type: ignore[call-overload,no-any-return]
        "ReflectionOutput",
        __base__=ReflectionOutput,
        notes=(list[_Note], Field(max_length=max_notes)),
    )


class ParsedReflection(BaseModel):
    """A reflection output, parsed."""

    reasoning: str
    notes: list[str]
    """The notes, without list markers and without their turn tags."""
    note_turns: list[list[int]] = Field(default_factory=list)
    """For each note, the turns it cites (empty when it cites none)."""


def reflection_error(text: str) -> str | None:
    """Why a reflection output does not follow the layout (None when it does)."""
    if not _REASONING.search(text):
        return "missing a <reasoning>...</reasoning> block"
    blocks = _NOTES.findall(text)
    if not blocks:
        return "missing a <notes>...</notes> block"
    if text.lower().rfind("<notes>") < text.lower().find("</reasoning>"):
        return "the <notes> block must come after the <reasoning> block"
    for line in blocks[-1].splitlines():
        if line.strip() and not _NOTE_LINE.match(line.strip()):
            return f"inside <notes>, every line must be '- note'; got {line.strip()[:80]!r}"
    return None


def _note_and_turns(body: str) -> tuple[str, list[int]]:
    tag = _TURNS_TAG.search(body)
    if tag is None:
        return body.strip(), []
    return body[: tag.start()].strip(), [int(t) for t in re.findall(r"\d+", tag.group(1))]


def render_reflection(reasoning: str, notes: Sequence[str]) -> str:
    """A reflection in the tagged layout that `parse_reflection` reads."""
    lines = "\n".join(f"- {' '.join(n.split())}" for n in notes)
    return f"<reasoning>\n{reasoning.strip()}\n</reasoning>\n<notes>\n{lines}\n</notes>"


def parse_reflection(text: str) -> ParsedReflection | None:
    """Parse a reflection output; None when it does not follow the layout.

    Duplicate notes (ignoring case and spacing) are kept once, in first position.
    """
    if reflection_error(text) is not None:
        return None
    reasoning = _REASONING.search(text)
    assert reasoning is not None
    lines = (_NOTE_LINE.match(line.strip()) for line in _NOTES.findall(text)[-1].splitlines())
    return _collect_notes(reasoning.group(1), [m.group(1) for m in lines if m is not None])


def _collect_notes(reasoning: str, bodies: Sequence[str]) -> ParsedReflection:
    """A parsed reflection from note texts (either layout): turn tags split off, spacing
    collapsed, empty notes and duplicates (ignoring case and spacing) left out."""
    notes: list[str] = []
    turns: list[list[int]] = []
    seen: set[str] = set()
    for body in bodies:
        note, cited = _note_and_turns(" ".join(body.split()))
        key = note.lower()
        if note and key not in seen:
            seen.add(key)
            notes.append(note)
            turns.append(cited)
    return ParsedReflection(reasoning=reasoning.strip(), notes=notes, note_turns=turns)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _drop_copies(parsed: ParsedReflection, copied_from: str) -> tuple[list[str], list[list[int]]]:
    """Drop notes that are not preferences: a single word, or pasted from the conversation.

    Small models sometimes paste the conversation into the notes or list names from the
    problem. A note sharing eight or more words in a row with `copied_from` (the assistant's
    replies and the person's turns that were not pushback) describes the conversation, not
    what the person wants; quoting a pushback turn stays allowed, since that is the evidence.
    """
    source = " ".join(_words(copied_from))
    notes, turns = [], []
    for k, note in enumerate(parsed.notes):
        words = _words(note)
        runs = (" ".join(words[i : i + _COPY_RUN]) for i in range(len(words) - _COPY_RUN + 1))
        if len(words) < _MIN_NOTE_WORDS or (source and any(run in source for run in runs)):
            continue
        notes.append(note)
        turns.append(parsed.note_turns[k] if k < len(parsed.note_turns) else [])
    return notes, turns


def _selection_schema(count: int) -> type[BaseModel]:
    """A schema for picking notes by number, each number within 1..count."""
    number = Annotated[int, Field(ge=1, le=count)]
    return create_model(  # type: ignore[call-overload,no-any-return]
        "NoteSelection",
        notes=(list[number], Field(max_length=count)),  # type: ignore[valid-type]
    )


def _conversation_text(conversation: list[Message], last: int = 6, limit: int = 600) -> str:
    shown = [m for m in conversation if m.role in ("user", "assistant")][-last:]
    names = {"user": "USER", "assistant": "ASSISTANT"}
    return "\n".join(f"{names[m.role]}: {clip(m.content, limit)}" for m in shown) or "(nothing yet)"


_LIST_ONLY = frozenset(
    {
        "max_notes",
        "layout",
        "retries",
        "structured_fallback",
        "max_turn_chars",
        "max_tokens",
        "pushback_labels",
    }
)
_UNREAD_BY = {
    "msc": _LIST_ONLY,
    "list": frozenset({"pick_before_notes", "notes_format", "fresh_notes"}),
}
"""The options each form does not read (``prompts_from`` says so itself)."""


class ReflectionMemory(BaseMemory):
    """Rewrites a list of preference notes after each session; picks relevant ones each turn.

    Args:
        models: the run's model roles (the ``memory`` role reflects and recalls).
        max_notes: the most notes kept per user.
        layout: ``json`` (structured output; the default, reliable on small models) or
            ``tags`` (free text in the trained reflector's format).
        retries: further attempts after an output that does not parse, each showing the
            model its error.
        structured_fallback: with ``tags``, after those attempts ask once more for the same
            content as structured output.
        select: pick relevant notes each turn with a model call (False: `recall` returns "").
        max_turn_chars: longest turn text shown to the reflection model.
        max_tokens: completion budget of one reflection (it fits 600 characters of reasoning
            and `max_notes` notes of 160).
    """

    name = "reflection"
    reads_grading = False  # it reflects on the turns and the user's enforcements

    class Options(MemoryOptions):
        max_notes: int = Field(default=DEFAULT_MAX_NOTES, ge=1)
        layout: Layout = "json"
        retries: int = Field(default=1, ge=0)
        structured_fallback: bool = True
        select: bool = True
        max_turn_chars: int = Field(default=1500, ge=1)
        max_tokens: int = Field(default=900, ge=1)
        pushback_labels: bool = False
        """Mark the user's enforcing turns ``PUSHBACK`` in the transcript (off: the reflector
        must tell complaints from other messages itself, as in the paper)."""
        form: Literal["list", "msc"] = "list"
        """``list``: a capped list of short notes, picked per turn by number (the options
        above apply); ``msc``: MultiSessionCollab's one free-text notes document, rewritten
        from the whole conversation, all of it in the system prompt and the relevant part
        picked in words before every reply, nothing capped (only ``select`` applies)."""
        initial_notes: str = ""
        """``form: msc``: what the first notes update is given as the notes while there are
        none yet (the authors' user-study app gives it a line saying nothing is learned
        yet); "": nothing, as in MSC's benchmark code."""
        pick_before_notes: bool = True
        """``form: msc``: the per-turn pick runs while the notes are still empty too, as in
        MSC's code (False: no pick call until the first session is learned)."""
        prompts_from: str | None = None
        """A MultiSessionCollab checkout (``form: msc`` only): the notes are updated and
        picked with MSC's own prompts, the update's whole reply kept as the notes as MSC's
        code keeps it, and the session context is the notes alone (MSC's agent prompt has
        its own place for them); None: our prompts."""

        @model_validator(mode="after")
        def _options_fit_form(self) -> Self:
            """Refuse an option the chosen form does not read (it would be a silent no-op)."""
            unread = sorted(self.model_fields_set & _UNREAD_BY[self.form])
            if unread:
                other = "list" if self.form == "msc" else "msc"
                raise ValueError(
                    f"{', '.join(unread)} applies to form {other}, and this reflection's form "
                    f"is {self.form} (set form: {other}, or leave {unread[0]} out)"
                )
            return self

        @model_validator(mode="after")
        def _prompts_take_msc_form(self) -> Self:
            if self.notes_format == "json" and self.prompts_from is None:
                raise ValueError("notes_format json is MSC's JSON path: it takes prompts_from")
            if self.prompts_from is not None:
                if self.form != "msc":
                    raise ValueError("prompts_from reads MSC's notes prompts: it takes form msc")
                self._msc_prompts = load_msc_notes_prompts(self.prompts_from)
            return self

        fresh_notes: bool = False
        """``form: msc``: every session starts from empty notes and each reflection is
        written from empty notes (MSC's generator in training mode: one reflection per
        session, none carried over); the notes of each session are still stored."""
        notes_format: Literal["text", "json"] = "text"
        """``form: msc`` with ``prompts_from``: ``json`` reads the notes update as MSC's
        code does on its Llama-3.3-70B path (one JSON object; its ``agent_notes`` are the
        notes); ``text``: the whole reply is the notes (MSC's path for every other model)."""

        _msc_prompts: NotesPrompts | None = PrivateAttr(default=None)
        """The checkout's notes prompts, read once when the options are checked."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        o = self.options
        self.max_notes, self.layout, self.retries = o.max_notes, o.layout, o.retries
        self.structured_fallback, self.select = o.structured_fallback, o.select
        self.max_turn_chars, self.max_tokens = o.max_turn_chars, o.max_tokens
        self.notes_prompts = o._msc_prompts or packaged_notes_prompts(prompt_template)

    def notes(self, user: UserRef) -> list[str]:
        """The user's current notes, in order."""
        return [item.text for item in self.state(user).items]

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        if self.options.form == "msc":
            text = self._carried(user)
            if not text or self.options.prompts_from:
                return text
            return render("msc_notes_context.md", notes=text).strip()
        notes = self.notes(user)
        if not notes:
            return ""
        return render("reflection_context.md", notes="\n".join(f"- {n}" for n in notes)).strip()

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        if self.options.form == "msc":
            return await self._msc_recall(user, conversation)
        notes = self.notes(user)
        if not notes or not self.select:
            return ""
        numbered = "\n".join(f"{i}. {n}" for i, n in enumerate(notes, start=1))
        prompt = render(
            "reflection_recall.md", notes=numbered, conversation=_conversation_text(conversation)
        )
        output = await self.models.get("memory").generate(
            [Message(role="user", content=prompt)],
            schema=_selection_schema(len(notes)),
            config=GenerateConfig(max_tokens=128, max_retries=self.retries),
        )
        chosen = sorted(set(output.parsed.notes))
        if not chosen:
            return ""
        picked = "\n".join(f"- {notes[i - 1]}" for i in chosen)
        return render("reflection_recall_result.md", notes=picked).strip()

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        """Reflect on the session and rewrite the notes.

        Raises:
            OutputValidationError: the reflection stayed unparseable after the retries (the
                previous notes are kept).
        """
        state = self.state(user)
        if not any(turn.speaker in ("user", "agent") for turn in record.turns):
            return  # nothing was said: nothing to reflect on, no model call
        if self.options.form == "msc":
            if self.options.fresh_notes:
                state.items = []
            await update_notes(
                self.models.get("memory"),
                self.notes_prompts,
                state,
                record,
                msc_json=self.options.notes_format == "json",
                initial=self.options.initial_notes,
            )
            return
        prior = [item.text for item in state.items]
        pushback = self.options.pushback_labels
        transcript = format_transcript(record, self.max_turn_chars, pushback=pushback)
        messages = reflection_messages(
            transcript, prior, self.max_notes, self.layout, pushback=pushback
        )
        if self.layout == "json":
            parsed = await self._reflect_structured(messages)
        else:
            parsed = await self.reflect(messages)
        enforced = {e.turn for e in pushbacks(record)}
        copied_from = " ".join(
            t.text
            for t in record.turns
            if t.speaker == "agent" or (t.speaker == "user" and t.index not in enforced)
        )
        parsed.notes, parsed.note_turns = _drop_copies(parsed, copied_from)
        state.items = self._rewrite(state.items, parsed, record.index)
        state.data["sessions_learned"] = int(state.data.get("sessions_learned", 0)) + 1
        state.data["last_reasoning"] = parsed.reasoning

    def _carried(self, user: UserRef) -> str:
        """The notes a session starts from ("" with ``fresh_notes``)."""
        return "" if self.options.fresh_notes else notes_text(self.state(user))

    async def _msc_recall(self, user: UserRef, conversation: list[Message]) -> str:
        """MSC's per-turn pick of the notes that bear on the next reply. With MSC's prompts
        the line before the picked notes comes even when none are picked, as in its code."""
        notes = self._carried(user)
        if not self.select or not (notes or self.options.pick_before_notes):
            return ""
        prompts = self.notes_prompts
        picked = await select_notes(self.models.get("memory"), prompts, notes, conversation)
        if prompts.raw_notes:
            return prompts.render("recall", notes=picked)
        return prompts.render("recall", notes=picked.strip()).strip() if picked.strip() else ""

    async def reflect(self, messages: list[Message]) -> ParsedReflection:
        """One reflection, retried with the layout error shown until it parses.

        When the free-text attempts all miss the layout and `structured_fallback` is on, the
        same messages are asked once more as structured output (`ReflectionOutput`).

        Raises:
            OutputValidationError: still invalid after every attempt.
        """

        def check(output: ModelOutput, _last: bool) -> ParsedReflection:
            error = reflection_error(output.text)
            parsed = parse_reflection(output.text) if not error else None
            if parsed is None:
                raise Invalid(error or "no notes found")
            return parsed

        try:
            return await ask_again(
                self.models.get("memory"),
                messages,
                check,
                feedback=lambda why: (
                    f"That reply does not follow the layout: {why}. Answer again with a "
                    "<reasoning> block, then a <notes> block with one '- note' per line."
                ),
                attempts=self.retries + 1,
                config=GenerateConfig(max_tokens=self.max_tokens, max_retries=0),
                what="reflection",
            )
        except OutputValidationError:
            if not self.structured_fallback:
                raise
        ask = Message(
            role="user",
            content="Give the same answer as JSON instead: 'reasoning' holds what the "
            "person revealed and how it changes the notes, 'notes' the whole rewritten list.",
        )
        return await self._reflect_structured([*messages, ask])

    async def _reflect_structured(self, messages: list[Message]) -> ParsedReflection:
        """The reflection as structured output (`ReflectionOutput`), parsed like the tags.

        Raises:
            OutputValidationError: still invalid after `retries` further attempts.
        """
        config = GenerateConfig(max_tokens=self.max_tokens, max_retries=self.retries)
        output = await self.models.get("memory").generate(
            messages, schema=reflection_schema(self.max_notes), config=config
        )
        answer = output.parsed
        assert isinstance(answer, ReflectionOutput)
        return _collect_notes(answer.reasoning, answer.notes)

    def _rewrite(
        self, old: list[MemoryItem], parsed: ParsedReflection, session: int
    ) -> list[MemoryItem]:
        """The new note items: unchanged notes keep their id and provenance."""
        previous = {" ".join(item.text.lower().split()): item for item in old}
        items: list[MemoryItem] = []
        for k, note in enumerate(parsed.notes[: self.max_notes]):
            kept = previous.get(" ".join(note.lower().split()))
            if kept is not None:
                items.append(kept)
                continue
            turns = parsed.note_turns[k] if k < len(parsed.note_turns) else []
            provenance = [
                Provenance(session=session, turn=t, source="reflection") for t in turns
            ] or [Provenance(session=session, source="reflection")]
            items.append(MemoryItem(id=f"s{session}-n{k}", text=note, provenance=provenance))
        return items
