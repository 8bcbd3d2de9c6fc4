"""The experience library: versions, provenance, vector prefilter, Markdown/JSON export."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

from ._credit import Stage
from ._experience import ANY_ENV, Experience
from ._verify import same_lesson

_EMPTY = np.zeros(0, dtype=np.int64)

ZONE_ORDER = ("golden", "warning", "preference")
ZONE_TITLES = {
    "golden": "Golden rules (do this)",
    "warning": "Warnings (avoid this)",
    "preference": "Preferences (how users respond)",
}


class LibraryVersion(BaseModel):
    """One update of the library (a round's distillation and evolution)."""

    version: int
    iteration: int
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    """Experiences pruned."""
    merged: list[str] = Field(default_factory=list)
    """Experiences that gained an episode: a new lesson said what they say."""
    dropped: list[str] = Field(default_factory=list)
    """Lessons the distiller wrote that failed a check, each with why (audit)."""
    touched: dict[str, list[str]] = Field(default_factory=dict)
    """Operator -> the experiences it rewrote this update."""
    size: int = 0
    """Active experiences after the update."""
    zones: dict[str, int] = Field(default_factory=dict)
    """Active experiences per zone after the update."""
    note: str = ""
    created_at: float = Field(default_factory=time.time)


class ExperienceLibrary(BaseModel):
    """All experiences (superseded and pruned ones kept, inactive, for their lineage) and
    the version history."""

    experiences: dict[str, Experience] = Field(default_factory=dict)
    version: int = 0
    iteration: int = 0
    """Evolution iterations done so far."""
    rounds: int = 0
    """Rounds of train episodes distilled so far."""
    history: list[LibraryVersion] = Field(default_factory=list)
    model: str = ""
    """The model that built the library (transfer: it may be loaded under another)."""
    embedder: str = ""
    """The embedder retrieval compared situations with (``hashing`` when MiniLM was not
    installed), and the similarity threshold."""
    _next: int = PrivateAttr(default=0)
    _index: Any = PrivateAttr(default=None)

    def new_id(self) -> str:
        """A fresh experience id."""
        self._next = max(self._next, len(self.experiences)) + 1
        while f"exp-{self._next}" in self.experiences:
            self._next += 1
        return f"exp-{self._next}"

    def add(self, experience: Experience) -> None:
        """Add (or replace) an experience."""
        self.experiences[experience.id] = experience
        self._index = None

    def remove(self, ids: list[str]) -> None:
        """Delete experiences outright (pruning only marks them: `Experience.pruned`)."""
        for i in ids:
            self.experiences.pop(i, None)
        self._index = None

    def commit(
        self,
        *,
        added: list[str],
        removed: list[str],
        note: str,
        merged: list[str] | None = None,
        dropped: list[str] | None = None,
        touched: dict[str, list[str]] | None = None,
    ) -> None:
        """Record an update as the next version (one version per update, whatever changed:
        an update whose every lesson failed its checks is kept too, so the audit trail
        misses none)."""
        self.version += 1
        active = self.active()
        self.history.append(
            LibraryVersion(
                version=self.version,
                iteration=self.iteration,
                added=added,
                removed=removed,
                merged=merged or [],
                dropped=dropped or [],
                touched=touched or {},
                size=len(active),
                zones={z: sum(e.zone == z for e in active) for z in ZONE_ORDER},
                note=note,
            )
        )
        self._index = None

    def same_as(self, experience: Experience) -> Experience | None:
        """The active experience that says what ``experience`` says, for the same
        environments, zone and stage (`same_lesson`), if there is one."""
        for e in self.active():
            if (
                e.id != experience.id
                and e.zone == experience.zone
                and e.stage == experience.stage
                and sorted(e.conditions.envs) == sorted(experience.conditions.envs)
                and same_lesson(e.lesson, experience.lesson)
            ):
                return e
        return None

    def active(self) -> list[Experience]:
        """The experiences retrieval may offer."""
        return [e for e in self.experiences.values() if e.active]

    def touched(self) -> None:
        """Invalidate the retrieval index after in-place edits."""
        self._index = None

    # retrieval ---------------------------------------------------------------------------
    def candidates(
        self,
        env: str,
        stage: Stage,
        query: np.ndarray,
        encode: Any,
        *,
        min_similarity: float = 0.6,
        limit: int = 20,
    ) -> list[tuple[Experience, float]]:
        """Active experiences for ``env`` and ``stage`` with cosine similarity >= the threshold.

        Args:
            query: the situation's unit vector.
            encode: ``list[str] -> np.ndarray`` used to (re)build the index.
        """
        exps, matrix, idx = self._prefilter(env, stage, encode)
        if idx.size == 0:
            return []
        sims = matrix[idx] @ query.astype(np.float32)
        keep = np.flatnonzero(sims >= min_similarity)
        top = keep[np.argsort(-sims[keep], kind="stable")][:limit]
        return [(exps[idx[i]], float(sims[i])) for i in top]

    def offered(self, env: str, stage: Stage, encode: Any) -> list[Experience]:
        """Active experiences for ``env`` and ``stage``, whatever their similarity: those a
        turn offers to retrieval before the threshold (in index order).

        Args:
            encode: ``list[str] -> np.ndarray`` used to (re)build the index.
        """
        exps, _, idx = self._prefilter(env, stage, encode)
        return [exps[i] for i in idx]

    def _prefilter(
        self, env: str, stage: Stage, encode: Any
    ) -> tuple[list[Experience], np.ndarray, np.ndarray]:
        """The index's experiences and matrix, and the rows for ``env`` (or any environment)
        and ``stage``."""
        exps, matrix, rows = self._ensure_index(encode)
        idx = np.union1d(rows.get((env, stage), _EMPTY), rows.get((ANY_ENV, stage), _EMPTY))
        return exps, matrix, idx

    def _ensure_index(
        self, encode: Any
    ) -> tuple[list[Experience], np.ndarray, dict[tuple[str, str], np.ndarray]]:
        if self._index is None:
            exps = self.active()
            matrix = (
                encode([e.embedding_text() for e in exps]) if exps else np.zeros((0, 1), np.float32)
            )
            groups: dict[tuple[str, str], list[int]] = {}
            for i, e in enumerate(exps):
                for env in e.conditions.envs:
                    groups.setdefault((env, e.stage), []).append(i)
            rows = {key: np.asarray(v, dtype=np.int64) for key, v in groups.items()}
            self._index = (exps, np.asarray(matrix, np.float32), rows)
        return self._index  # type: ignore[no-any-return]

    # export ------------------------------------------------------------------------------
    def to_markdown(self, *, include_superseded: bool = False) -> str:
        """A readable document: an overview table, every lesson on one line per environment
        (golden, then warnings, then preferences; the most-learned first), the experiences
        in full by zone and environment (in stage order), the version history, and the
        lessons the checks dropped."""
        exps = list(self.experiences.values()) if include_superseded else self.active()
        lines = [f"# Experience library (version {self.version}, {len(exps)} experiences)\n"]
        built = f"Built with `{self.model}` " if self.model else "Built "
        lines.append(
            built + f"over {self.iteration} evolution iterations. Golden rules come from "
            "episodes that succeeded, warnings from ones that failed, preferences from partial "
            "successes.\n"
        )
        if self.embedder:
            lines.append(f"Retrieval: {self.embedder}.\n")
        envs = sorted({_env_of(e) for e in exps})
        if envs:
            lines += ["| environment | " + " | ".join(ZONE_ORDER) + " |", "|---" * 4 + "|"]
            for env in envs:
                counts = [sum(_env_of(e) == env and e.zone == z for e in exps) for z in ZONE_ORDER]
                lines.append(f"| {env} | " + " | ".join(map(str, counts)) + " |")
            lines.append("")
        if exps:
            lines.append("## At a glance\n")
            for env in envs:
                lines.append(f"**{env}**\n")
                here = sorted((e for e in exps if _env_of(e) == env), key=_glance_order)
                lines += [e.glance() for e in here]
                lines.append("")
        for zone in ZONE_ORDER:
            group = [e for e in exps if e.zone == zone]
            if not group:
                continue
            lines.append(f"## {ZONE_TITLES[zone]}\n")
            group.sort(key=_reading_order)
            for env in sorted({_env_of(e) for e in group}):
                lines.append(f"### {env}\n")
                lines += [e.markdown() for e in group if _env_of(e) == env]
        if self.history:
            lines += self._history_table()
            lines += self._lineage()
            lines += self._pruned()
            lines.append("## History\n")
            for h in self.history:
                change = f"+{len(h.added)} -{len(h.removed)}"
                change += f", {len(h.merged)} merged" if h.merged else ""
                change += f", {len(h.dropped)} dropped" if h.dropped else ""
                lines.append(f"- v{h.version} (iteration {h.iteration}): {h.note}; {change}")
            dropped = [(h.version, d) for h in self.history for d in h.dropped]
            if dropped:
                lines.append(
                    "\n## Lessons not kept\n\nWritten by the distiller and dropped by the "
                    "library's checks (after one rewrite), with why:\n"
                )
                lines += [f"- v{v}: {d}" for v, d in dropped]
        return "\n".join(lines) + "\n"

    def _history_table(self) -> list[str]:
        """The library after each update: its size, its zones and what changed."""
        lines = [
            "## Library by iteration\n",
            "| iteration | version | size | golden | warning | preference | added | merged "
            "| mutated | generalized | crossed | pruned | not kept |",
            "|---" * 13 + "|",
        ]
        for h in self.history:
            ops = [len(h.touched.get(op, [])) for op in ("mutation", "generalization", "crossover")]
            zones = [h.zones.get(z, 0) for z in ZONE_ORDER]
            row = [h.iteration, h.version, h.size, *zones, len(h.added), len(h.merged), *ops]
            row += [len(h.removed), len(h.dropped)]
            lines.append("| " + " | ".join(map(str, row)) + " |")
        return [*lines, ""]

    def _lineage(self) -> list[str]:
        """Each active experience's history, with the history of those it was made from."""
        exps = sorted(self.active(), key=_reading_order)
        if not exps:
            return []
        lines = [
            "## Lineage\n",
            "What happened to each experience in the library, and to those it came from.\n",
        ]
        for e in exps:
            lines.append(f"- **{e.id}** ({e.zone}, {e.stage}; {_env_of(e)}): {e.lesson}")
            lines += self._events(e, depth=1, seen=set())
        return [*lines, ""]

    def _events(self, e: Experience, *, depth: int, seen: set[str]) -> list[str]:
        seen.add(e.id)
        pad = "  " * depth
        lines = [f"{pad}- {event.line()}" for event in e.events]
        for parent_id in e.parents:
            parent = self.experiences.get(parent_id)
            if parent is None or parent_id in seen:
                continue
            lines.append(
                f"{pad}- from {parent_id} ({parent.zone}, {parent.stage}): {parent.lesson}"
            )
            lines += self._events(parent, depth=depth + 1, seen=seen)
        return lines

    def _pruned(self) -> list[str]:
        """The experiences pruning took out, each with when and why."""
        gone = [e for e in self.experiences.values() if e.pruned is not None]
        if not gone:
            return []
        lines = ["## Pruned\n"]
        for e in sorted(gone, key=_reading_order):
            when = next((ev.iteration for ev in e.events if ev.kind == "pruned"), self.iteration)
            lines.append(
                f"- {e.id} ({e.zone}, {e.stage}; {_env_of(e)}), iteration {when}: {e.pruned}. "
                f"{e.lesson}"
            )
        return [*lines, ""]

    def to_json(self) -> str:
        """The whole library as JSON (loads back with `from_json`)."""
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str) -> ExperienceLibrary:
        """Load a library saved with `to_json`."""
        return cls.model_validate_json(text)

    @classmethod
    def load(cls, path: str | Path) -> ExperienceLibrary:
        """Load a library JSON file (e.g. to run it with a different model)."""
        return cls.from_json(Path(path).read_text("utf-8"))


_STAGE_ORDER = {"exploration": 0, "verification": 1, "completion": 2}


def _env_of(e: Experience) -> str:
    """The heading an experience is listed under: its environments, or ``any environment``."""
    envs = [env for env in e.conditions.envs if env != ANY_ENV]
    return "any environment" if ANY_ENV in e.conditions.envs or not envs else ", ".join(envs)


def _glance_order(e: Experience) -> tuple[int, int, int, int, str]:
    """Zone, then the episodes it was learned in (most first), then stage and id."""
    stage, number, eid = _reading_order(e)
    return (ZONE_ORDER.index(e.zone), -e.episodes, stage, number, eid)


def _reading_order(e: Experience) -> tuple[int, int, str]:
    """Stage, then the number in the id (exp-2 before exp-10)."""
    digits = "".join(ch for ch in e.id if ch.isdigit())
    return (_STAGE_ORDER.get(e.stage, 3), int(digits) if digits else 0, e.id)
