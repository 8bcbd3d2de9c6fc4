"""Several runs side by side: each run's setting (benchmark, models per role, seed, options),
conditions x metrics across runs, and paired differences between runs that share users and
problems."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rapport.eval import Estimate, metric_names, per_user_means
from rapport.log import SessionRecord, UserRecord
from rapport.store import RUN_FILE, RunStore

from ._build import build_report
from ._curves import PairedDifference, paired_differences
from ._describe import planned_sessions


class CompareError(ValueError):
    """Runs that cannot be compared (different benchmarks, the same run twice)."""


class RunOverview(BaseModel):
    """What a list of runs shows of one run: its setting, size and state."""

    label: str
    """A short name, unique among the runs shown (the run dir's name)."""
    run_dir: str
    run_id: str
    benchmark: str
    created_at: float
    models: dict[str, str] = Field(default_factory=dict)
    """Role -> the model spec it called (several: joined by ``+``); configured roles that
    made no call yet show their configured spec."""
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)
    """The benchmark's options as stored."""
    memory_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    conditions: list[str] = Field(default_factory=list)
    users: int = 0
    sessions: int = 0
    """Stored sessions."""
    planned_sessions: int | None = None
    """Sessions the run's last invocation set out to run (None: not recorded)."""
    error_sessions: int = 0
    size_bytes: int = 0
    """The run store on disk (with its write-ahead log)."""
    headline_metric: str | None = None
    """The run's first metric (the benchmark's headline: TS, p_em ...); None: no scores."""
    headline: dict[str, float] = Field(default_factory=dict)
    """Condition -> mean over users of `headline_metric` (eval sessions)."""

    @property
    def status(self) -> str:
        """``complete``, ``partial (n/N)`` or ``n sessions``, with the error sessions."""
        if self.planned_sessions is None:
            state = f"{self.sessions} sessions"
        elif self.sessions >= self.planned_sessions:
            state = "complete"
        else:
            state = f"partial ({self.sessions}/{self.planned_sessions})"
        return f"{state}, {self.error_sessions} errors" if self.error_sessions else state


def is_run_dir(path: str | Path) -> bool:
    """Whether a directory holds a run store."""
    return (Path(path) / RUN_FILE).is_file()


def find_runs(folder: str | Path) -> list[Path]:
    """The run dirs directly inside a folder, by name; links (``runs/latest``) are left out:
    they name a run the folder already holds."""
    root = Path(folder)
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and is_run_dir(p))


def run_overview(run_dir: str | Path, label: str | None = None) -> RunOverview:
    """A run's overview, read from its store alone.

    Raises:
        FileNotFoundError: the dir holds no run.
    """
    with RunStore.open_readonly(run_dir) as store:
        run = store.run_or_none()
        if run is None:
            raise FileNotFoundError(f"no run found in {run_dir} (its store holds no run header)")
        invocations = store.invocations()
        calls = store.models_by_role()
        sessions, errors = store.count_rows(), store.count_rows(status="error")
        users = store.user_count()
        records = store.score_records()
    models = {role: "+".join(specs) for role, specs in sorted(calls.items())}
    for role, spec in run.config.models.items():
        if role != "all" or not models:  # `all` stands for the roles that called
            models.setdefault(role, spec)
    config = run.config
    return RunOverview(
        label=label or Path(run_dir).name,
        run_dir=str(run_dir),
        run_id=run.id,
        benchmark=run.benchmark,
        created_at=run.created_at,
        models=dict(sorted(models.items())),
        seed=config.seed,
        options=dict(config.options),
        memory_options={k: dict(v) for k, v in config.memory_options.items()},
        conditions=[c.name for c in run.conditions] or list(config.memory),
        users=users,
        sessions=sessions,
        planned_sessions=planned_sessions(invocations),
        error_sessions=errors,
        size_bytes=_store_size(Path(run_dir)),
        **_headline(records),
    )


def _headline(records: list[SessionRecord]) -> dict[str, Any]:
    """The first metric and, per condition, its mean over users."""
    names = metric_names(records)
    if not names:
        return {}
    by_condition: dict[str, list[SessionRecord]] = {}
    for record in records:
        by_condition.setdefault(record.condition, []).append(record)
    means = {c: per_user_means(rs, names[0]) for c, rs in by_condition.items()}
    return {
        "headline_metric": names[0],
        "headline": {c: sum(m.values()) / len(m) for c, m in means.items() if m},
    }


def _store_size(run_dir: Path) -> int:
    files = (run_dir / name for name in (RUN_FILE, f"{RUN_FILE}-wal"))
    return sum(f.stat().st_size for f in files if f.is_file())


class ConditionRow(BaseModel):
    """One condition of one run: its metrics (mean over users, 95% CI)."""

    run: str
    """The run's label."""
    condition: str
    estimates: dict[str, Estimate]
    users: dict[str, int] = Field(default_factory=dict)
    """Metric -> the users its mean is over."""


class RunDifference(BaseModel):
    """One condition of `run` minus the same condition of `baseline_run`, paired by user and
    session over the users (same id, same stored user) and problems (same seed, same problem
    id at the same position) the two runs share."""

    run: str
    baseline_run: str
    condition: str
    users: int
    """Users both runs share."""
    metrics: dict[str, PairedDifference] = Field(default_factory=dict)


class Unpaired(BaseModel):
    """Two runs of a comparison with no paired difference, and why."""

    run: str
    baseline_run: str
    reason: str


class Comparison(BaseModel):
    """Runs of one benchmark side by side; `to_json` is ``rapport compare --format json``."""

    benchmark: str
    metrics: list[str]
    lower_is_better: list[str] = Field(default_factory=list)
    runs: list[RunOverview]
    rows: list[ConditionRow]
    differences: list[RunDifference] = Field(default_factory=list)
    """For every two runs (later minus earlier, in the order given) that share users and
    problems, each condition both have."""
    unpaired: list[Unpaired] = Field(default_factory=list)
    """The two runs (later, earlier) that have no paired difference, each with why."""

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``rapport compare --format json``."""
        return self.model_dump(mode="json")


def labels(run_dirs: Sequence[Path]) -> list[str]:
    """Short unique names for run dirs: the dir's name, or its whole path where two share it."""
    names = [p.name or str(p) for p in run_dirs]
    return [n if names.count(n) == 1 else str(p) for n, p in zip(names, run_dirs, strict=True)]


def compare_runs(run_dirs: Sequence[str | Path], *, seed: int = 0) -> Comparison:
    """Compare runs of one benchmark (read-only).

    Args:
        run_dirs: the run dirs, in the order to show them (the first is the reference of
            the paired differences).
        seed: the bootstrap seed.

    Raises:
        FileNotFoundError: a dir holds no run.
        CompareError: no runs, the same run twice, or runs of different benchmarks.
    """
    paths = [Path(p) for p in run_dirs]
    if not paths:
        raise CompareError("no runs to compare")
    seen: dict[Path, Path] = {}
    for path in paths:
        if path.resolve() in seen:
            raise CompareError(f"{path} is given twice (as {seen[path.resolve()]})")
        seen[path.resolve()] = path
    overviews = [run_overview(p, label) for p, label in zip(paths, labels(paths), strict=True)]
    kinds = {o.benchmark for o in overviews}
    if len(kinds) > 1:
        named = ", ".join(f"{o.label} ({o.benchmark})" for o in overviews)
        raise CompareError(f"runs of different benchmarks cannot be compared: {named}")
    reports = [build_report(p, seed=seed, light=True) for p in paths]
    metrics = list(dict.fromkeys(m for r in reports for m in r.metrics))
    sides = [_Side.read(p, o) for p, o in zip(paths, overviews, strict=True)]
    rows = [
        ConditionRow(
            run=o.label,
            condition=c,
            estimates=estimates,
            users={m: side.users_with(c, m) for m in estimates},
        )
        for o, r, side in zip(overviews, reports, sides, strict=True)
        for c, estimates in r.conditions.items()
    ]
    comparison = Comparison(
        benchmark=overviews[0].benchmark,
        metrics=metrics,
        lower_is_better=sorted({m for r in reports for m in r.lower_is_better}),
        runs=overviews,
        rows=rows,
    )
    _pair(comparison, sides, seed)
    return comparison


def _pair(comparison: Comparison, sides: Sequence[_Side], seed: int) -> None:
    """Every two runs (later minus earlier): their differences, or why there are none."""
    for i, base in enumerate(sides):
        for other in sides[i + 1 :]:
            found, why = run_differences(base, other, comparison.metrics, seed=seed)
            comparison.differences.extend(found)
            if why:
                comparison.unpaired.append(
                    Unpaired(run=other.label, baseline_run=base.label, reason=why)
                )


def compare_by_benchmark(run_dirs: Sequence[str | Path], *, seed: int = 0) -> list[Comparison]:
    """One comparison per benchmark among the runs (in the order each benchmark first
    appears), as the viewer of a folder of runs shows them.

    Raises:
        FileNotFoundError: a dir holds no run.
        CompareError: no runs, or the same run twice.
    """
    paths = [Path(p) for p in run_dirs]
    if not paths:
        raise CompareError("no runs to compare")
    groups: dict[str, list[Path]] = {}
    for path in paths:
        with RunStore.open_readonly(path) as store:
            run = store.run_or_none()
        if run is None:
            raise FileNotFoundError(f"no run found in {path} (its store holds no run header)")
        groups.setdefault(run.benchmark, []).append(path)
    return [compare_runs(group, seed=seed) for group in groups.values()]


class _Side(BaseModel):
    """What pairing reads of one run: its users and its sessions' scores."""

    label: str
    seed: int
    users: dict[str, dict[str, Any]]
    records: list[SessionRecord]

    @classmethod
    def read(cls, run_dir: Path, overview: RunOverview) -> _Side:
        with RunStore.open_readonly(run_dir) as store:
            users: list[UserRecord] = store.users()
            records = store.score_records()
        return cls(
            label=overview.label,
            seed=overview.seed,
            users={u.user_id: u.spec for u in users},
            records=records,
        )

    def users_with(self, condition: str, metric: str) -> int:
        """Users with eval sessions of `condition` scored on `metric`."""
        return len(per_user_means((r for r in self.records if r.condition == condition), metric))


def run_differences(
    base: _Side, other: _Side, metrics: Sequence[str], *, seed: int = 0
) -> tuple[list[RunDifference], str]:
    """``other - base`` per condition both have, over shared users and problems, and why
    there is none ("" where there is one).

    Two runs share a user when it has the same id and stored profile in both, and a problem
    when the session at the same position has the same problem id and the runs the same
    seed (a benchmark draws its problems from the seed, and not every problem id names
    what was drawn)."""
    if base.seed != other.seed:
        return [], f"different seeds ({base.seed} and {other.seed}) draw different problems"
    shared = {u for u, spec in other.users.items() if base.users.get(u) == spec}
    if not shared:
        return [], "no user in common (the same id with the same stored profile)"
    in_base = {r.condition for r in base.records}
    conditions = [c for c in dict.fromkeys(r.condition for r in other.records) if c in in_base]
    if not conditions:
        return [], "no condition in common"
    result = [_difference(base, other, c, shared, metrics, seed) for c in conditions]
    found = [d for d in result if d.metrics]
    if found:
        return found, ""
    if not any(d.users for d in result):
        return [], "no session of a shared user on the same problem at the same position"
    return [], "no metric scored on both sides of a shared session"


def _difference(
    base: _Side,
    other: _Side,
    condition: str,
    shared: set[str],
    metrics: Sequence[str],
    seed: int,
) -> RunDifference:
    """One condition: sessions of shared users at the same position on the same problem."""
    problems = {(r.user_id, r.index): r.spec_id for r in base.records if r.condition == condition}
    theirs = [
        r.model_copy(update={"condition": "other"})
        for r in other.records
        if r.condition == condition
        and r.user_id in shared
        and problems.get((r.user_id, r.index)) == r.spec_id
    ]
    keys = {(r.user_id, r.index) for r in theirs}
    mine = [
        r.model_copy(update={"condition": "base"})
        for r in base.records
        if r.condition == condition and (r.user_id, r.index) in keys
    ]
    diffs = {
        m: d
        for m in metrics
        if (d := paired_differences([*mine, *theirs], m, "base", seed=seed).get("other"))
    }
    return RunDifference(
        run=other.label,
        baseline_run=base.label,
        condition=condition,
        users=len({u for u, _ in keys}),
        metrics=diffs,
    )
