"""The run, described: config, models per role with their weights or servers, retrieval
backends, packages and the code revision (from the invocations the runner recorded)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from rapport.envs import PAPER_DATA, benchmark_class, differing
from rapport.log import ExperimentConfig, Invocation, ModelInfo, Run, role_sampling


class ModelUse(BaseModel):
    """The model behind one role, and how many calls it made."""

    role: str
    spec: str
    calls: int = 0
    path: str | None = None
    sha256: str | None = None
    base_url: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    """The role's sampling defaults (``all``'s with its own over them), where any are set."""


class PaperDifference(BaseModel):
    """A setting the paper fixes that the run did otherwise (a differing protocol row)."""

    setting: str
    paper: Any
    ours: Any
    source: str
    """Where the paper fixes it (section, table or code file)."""
    option: str
    """How a run sets it."""
    note: str = ""


class RunDescription(BaseModel):
    """What a reader needs to know to trust or repeat the run."""

    config: dict[str, Any]
    """The `ExperimentConfig` as stored."""
    seed: int
    preset: str | None = None
    """The preset that ran (None: the paper's protocol)."""
    differs_from_paper: list[PaperDifference] | None = None
    """The settings the benchmark's paper fixes (its ``paper_protocol``) that the run's
    stored config does otherwise; None: the benchmark declares no paper protocol. Data
    options are in the next two."""
    data_read: dict[str, Any] = Field(default_factory=dict)
    """Options that read a paper's published data or text from a path, as given."""
    data_not_the_papers: dict[str, str] = Field(default_factory=dict)
    """Options that read a paper's published data, left at rapport's own: option -> what
    the paper uses and how to give it."""
    benchmark_options: dict[str, Any] = Field(default_factory=dict)
    memory_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Condition -> its memory's options as it ran with them, defaults included (runs
    stored before this was recorded: the options the config gave)."""
    models: list[ModelUse] = Field(default_factory=list)
    retrieval: dict[str, str] = Field(default_factory=dict)
    """Condition -> embedder or retrieval backend actually used."""
    packages: dict[str, str] = Field(default_factory=dict)
    rapport_version: str = ""
    git_revision: str | None = None
    git_dirty: bool | None = None
    python: str = ""
    platform: str = ""
    invocations: int = 0
    """How many times the runner worked on the run dir (resumes add one each)."""
    changed: list[str] = Field(default_factory=list)
    """What differed between invocations (packages, revision, models ...)."""

    def differences(self) -> str:
        """The settings that differ from the paper, in words (see `differences_text`)."""
        return differences_text(self)


def planned_sessions(invocations: list[Invocation]) -> int | None:
    """Sessions the run's last invocation set out to run (None: not recorded)."""
    return invocations[-1].planned_sessions if invocations else None


def describe_run(
    run: Run, invocations: list[Invocation], calls: dict[str, dict[str, int]]
) -> RunDescription:
    """The description from the run header, its invocations and the calls per role/model."""
    config = run.config
    last = invocations[-1] if invocations else Invocation(rapport_version=run.rapport_version)
    return RunDescription(
        config=config.model_dump(mode="json"),
        seed=config.seed,
        preset=config.preset,
        differs_from_paper=paper_differences(config),
        data_read=_data_options(config, given=True),
        data_not_the_papers=_data_options(config, given=False),
        benchmark_options=dict(config.options),
        memory_options=(
            {k: dict(v) for k, v in last.memory_settings.items()}
            or {k: dict(v) for k, v in config.memory_options.items()}
        ),
        models=[
            use.model_copy(update={"sampling": role_sampling(config.sampling, use.role)})
            for use in _model_uses(config.models, last.models, calls)
        ],
        retrieval=dict(last.retrieval),
        packages=dict(last.packages),
        rapport_version=last.rapport_version or run.rapport_version,
        git_revision=last.git_revision,
        git_dirty=last.git_dirty,
        python=last.python,
        platform=last.platform,
        invocations=len(invocations),
        changed=_changes(invocations),
    )


def paper_differences(config: ExperimentConfig) -> list[PaperDifference] | None:
    """The settings of the benchmark's paper protocol that the config does otherwise, read
    from the config as stored (its preset applied); None when the benchmark declares no
    paper protocol or cannot be loaded."""
    try:
        cls = benchmark_class(config.benchmark)
    except (ValueError, ImportError):
        return None
    if not cls.paper_protocol:
        return None
    return [
        PaperDifference.model_validate({k: v for k, v in row.as_dict().items() if k != "same"})
        for row in differing(cls, config)
    ]


def shown(value: Any) -> str:
    """A setting's value on one line, as a person reads it."""
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {shown(v)}" for k, v in value.items()) + "}"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return " ".join(text.split())


def differences_text(description: RunDescription) -> str:
    """The settings that differ from the paper, in words: ``paper protocol not declared``,
    ``none``, or each as ``setting=ours (paper: value, source)``."""
    rows = description.differs_from_paper
    if rows is None:
        return "paper protocol not declared"
    if not rows:
        return "none"
    return ", ".join(
        f"{r.setting}={shown(r.ours)} (paper: {shown(r.paper)}, {r.source})" for r in rows
    )


def _data_options(config: ExperimentConfig, *, given: bool) -> dict[str, Any]:
    """The options that read a paper's data (``paper_data`` on the field): those the run
    gave (`given`), or those it left at rapport's own with what the paper uses."""
    defaults, papers = _defaults(config)
    found: dict[str, Any] = {}
    for name, paper in papers.items():
        value = config.options.get(name, defaults.get(name))
        if (value != defaults.get(name)) == given:
            found[name] = value if given else paper
    return found


def _defaults(config: ExperimentConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """The benchmark's option defaults, and its data options with what the paper uses."""
    try:
        model = benchmark_class(config.benchmark).options_model
    except (ValueError, ImportError):
        return {}, {}
    if model is None:
        return {}, {}
    try:
        defaults = model.model_validate({}).model_dump(mode="json")
    except ValueError:
        return {}, {}  # an options model with required fields has no paper default
    papers = {}
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get(PAPER_DATA), str):
            papers[name] = str(extra[PAPER_DATA])
    return defaults, papers


def preset_line(description: RunDescription) -> str:
    """One line: which preset ran and the options that differ from the paper."""
    name = description.preset or "none (the paper's protocol)"
    line = f"Preset: {name}; options that differ from the paper: {differences_text(description)}"
    if description.data_not_the_papers:
        own = "; ".join(f"{k} (paper: {v})" for k, v in description.data_not_the_papers.items())
        line += f"; rapport's own data, not the paper's: {own}"
    if description.data_read:
        line += "; data read from: " + ", ".join(
            f"{k}={v}" for k, v in description.data_read.items()
        )
    return line


def _model_uses(
    configured: dict[str, str], infos: list[ModelInfo], calls: dict[str, dict[str, int]]
) -> list[ModelUse]:
    """Roles that made calls (with the model they called), then configured roles that made
    none (``all``, the default of every role, only when no role made a call); weights and
    servers come from the invocation's record of that spec."""
    by_spec = {info.spec: info for info in infos}
    uses = [
        _use(role, spec, n, by_spec.get(spec))
        for role, models in sorted(calls.items())
        for spec, n in models.items()
    ]
    seen = {u.role for u in uses} | ({"all"} if uses else set())
    for role, spec in sorted(configured.items()):
        if role not in seen:
            uses.append(_use(role, spec, 0, by_spec.get(spec)))
    return uses


def _use(role: str, spec: str, calls: int, info: ModelInfo | None) -> ModelUse:
    if info is None:
        return ModelUse(role=role, spec=spec, calls=calls)
    return ModelUse(
        role=role,
        spec=spec,
        calls=calls,
        path=info.path,
        sha256=info.sha256,
        base_url=info.base_url,
    )


def _changes(invocations: list[Invocation]) -> list[str]:
    if len(invocations) < 2:
        return []
    changed: list[str] = []
    for field in ("rapport_version", "git_revision", "packages", "models", "retrieval", "python"):
        values = {str(i.model_dump()[field]) for i in invocations}
        if len(values) > 1:
            changed.append(field)
    return changed
