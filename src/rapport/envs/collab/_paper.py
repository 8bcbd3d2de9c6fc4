"""What MultiSessionCollab's paper and code fix, setting by setting, beside a run's config
(`COLLAB_PAPER`: ``rapport protocol collab``)."""

from __future__ import annotations

from typing import Any, Literal

from rapport.llm import DEFAULT_SPEC, GenerateConfig
from rapport.log import ExperimentConfig

from .._paper import PaperSetting, Reader, generic, memory_option, option
from ._grading import GRADER_CONFIG
from ._loaders import is_msc_cache, msc_dataset, msc_files
from ._msc_profiles import load_msc_profiles
from ._msc_user import MSC_USER_CONFIG
from ._options import CollabOptions
from ._profiles import PREFERENCES_PER_USER

MSC_DATASETS = ("math-500", "math-hard", "logiqa", "mmlu", "medqa")
"""MSC's five datasets, in the order of its Table 1 (§5)."""
PAPER_USER_MODEL = "Llama-3.3-70B-Instruct"
"""The user simulator and judge of every MSC table (§5)."""
CODE = "collaborativeagents/"


def _options(config: ExperimentConfig) -> CollabOptions:
    return CollabOptions.model_validate(config.options)


def _split(config: ExperimentConfig) -> Literal["test", "train"]:
    return "train" if _options(config).split == "train" else "test"


def _problem_source(config: ExperimentConfig) -> str:
    problems = _options(config).problems
    return f"MSC's cached {_split(config)} sets" if is_msc_cache(problems) else problems


def _datasets(config: ExperimentConfig) -> list[str]:
    options = _options(config)
    if not is_msc_cache(options.problems):
        return []
    held = {msc_dataset(f.parent.name) for f in msc_files(options.problems, _split(config))}
    return sorted(set(options.datasets or held), key=table_order)


def table_order(dataset: str) -> tuple[int, str]:
    """MSC's datasets in the order of its Table 1, then any others by name."""
    known = MSC_DATASETS.index(dataset) if dataset in MSC_DATASETS else len(MSC_DATASETS)
    return (known, dataset)


def _users(config: ExperimentConfig) -> int:
    profiles = _options(config).profiles
    if "users" in config.model_fields_set or profiles is None:
        return config.users
    return len(load_msc_profiles(profiles))


def _profiles(config: ExperimentConfig) -> str:
    profiles = _options(config).profiles
    if profiles is None:
        return "drawn from rapport's taxonomy"
    load_msc_profiles(profiles)  # a file that is not MSC's layout fails here
    return "MSC's user_profiles.json"


def _per_user(config: ExperimentConfig) -> int | list[int]:
    profiles = _options(config).profiles
    if profiles is None:
        return PREFERENCES_PER_USER
    counts = sorted({len(u.preferences) for u in load_msc_profiles(profiles)})
    return counts[0] if len(counts) == 1 else counts


def _model(role: str) -> Reader:
    return lambda config: config.models.get(role) or config.models.get("all") or DEFAULT_SPEC


def _memory_model(config: ExperimentConfig) -> str:
    memory, agent = _model("memory")(config), _model("agent")(config)
    return "the agent's model" if memory == agent else memory


def _prompts(config: ExperimentConfig) -> str:
    return "MSC's own (read from the checkout)" if _options(config).prompts_from else "ours"


def _fixed(value: Any) -> Reader:
    """A setting rapport's code fixes (no option): its value whatever the config."""
    return lambda _config: value


def _is_paper_model(_paper: Any, value: Any) -> bool:
    return PAPER_USER_MODEL.lower() in str(value).lower()


def _holds(paper: Any, value: Any) -> bool:
    return set(paper) <= set(value or ())


def _same_set(paper: Any, value: Any) -> bool:
    return set(paper) == set(value or ())


def _any_model(_paper: Any, value: Any) -> bool:
    return bool(value)


def _sampling(config: GenerateConfig) -> dict[str, float | int | None]:
    return {"temperature": config.temperature, "max_tokens": config.max_tokens}


def _form(config: ExperimentConfig) -> str:
    form = memory_option("reflection", "form", "list")(config)
    return "reflection: one notes document" if form == "msc" else f"reflection: form {form}"


def _notes_in(config: ExperimentConfig) -> str:
    placed = memory_option("reflection", "notes_in")(config)
    return "the agent's system prompt" if placed in (None, "system") else f"notes_in {placed}"


def _agent_format(config: ExperimentConfig) -> dict[str, str]:
    return {"agent": _model("agent")(config), "format": _options(config).agent_format}


def _agent_format_fits(_paper: Any, value: Any) -> bool:
    """MSC's code answers in JSON exactly when the agent is Llama-3.3-70B-Instruct."""
    json_model = PAPER_USER_MODEL.lower() in str(value["agent"]).lower()
    return (value["format"] == "json") == json_model


def _ts(config: ExperimentConfig) -> str:
    if _options(config).grader == "judge":
        return "the judge's accuracy of the user's final draft"
    return "code's match of the user's final draft against the answer"


def _len(config: ExperimentConfig) -> str:
    if _options(config).session == "msc":
        return "messages, the agent's opening included"
    return "messages (the guarded session has no agent opening)"


_SERVE = f"serve {PAPER_USER_MODEL} (openai/...) for this role, as configs/msc-main.yaml does"

COLLAB_PAPER = (
    PaperSetting(
        "datasets",
        list(MSC_DATASETS),
        "§5; README",
        "options.datasets",
        _datasets,
        "give --problems CHECKOUT/collaborativeagents/datasets/cache",
        matches=_same_set,
    ),
    PaperSetting(
        "problems",
        "MSC's cached test sets",
        f"§5; {CODE}datasets/cache/*/testset_size20_seed42.json",
        "options.problems",
        _problem_source,
        "MSC's problems are not shipped: --problems CHECKOUT/collaborativeagents/datasets/cache",
    ),
    PaperSetting(
        "users per dataset",
        100,
        "§5",
        "--users",
        _users,
        "every profile of --profiles (100 in MSC's file)",
    ),
    PaperSetting(
        "user profiles",
        "MSC's user_profiles.json",
        f"§3.2; {CODE}user_profiles/user_profiles.json",
        "options.profiles",
        _profiles,
        "MSC's profiles are not shipped: --profiles CHECKOUT/collaborativeagents/"
        "user_profiles/user_profiles.json",
    ),
    PaperSetting("preferences per user", 3, "§3.2", "(fixed)", _per_user),
    PaperSetting(
        "sessions per user",
        20,
        "§5; README (--eval_size 20)",
        "--sessions",
        generic("sessions"),
        "rapport's default is 3 for quick runs: --sessions 20",
    ),
    PaperSetting("max turns per session", 10, "§3.1, §5", "--max-turns", generic("max_turns")),
    PaperSetting(
        "conditions",
        ["none", "reflection"],
        "Table 1; README (experiment_type)",
        "--memory",
        generic("memory"),
        "Table 1 compares no memory with memory; the oracle is Table 3's S4 (collab-ablation)",
        matches=_holds,
    ),
    PaperSetting(
        "agent model",
        "the model under test",
        "§5",
        "--model agent=",
        _model("agent"),
        matches=_any_model,
    ),
    PaperSetting(
        "user simulator model",
        PAPER_USER_MODEL,
        "§5",
        "--model user=",
        _model("user"),
        _SERVE,
        matches=_is_paper_model,
    ),
    PaperSetting(
        "judge model",
        PAPER_USER_MODEL,
        "§5",
        "--model judge=",
        _model("judge"),
        _SERVE,
        matches=_is_paper_model,
    ),
    PaperSetting(
        "memory model",
        "the agent's model",
        f"§4.1; {CODE}conversation_generator.py",
        "--model memory=",
        _memory_model,
        "the memory role takes the agent's model unless named",
    ),
    PaperSetting(
        "session",
        "msc",
        f"§3.1; {CODE}conversation_generator.py",
        "options.session",
        option(CollabOptions, "session"),
    ),
    PaperSetting("user simulator", "llm", "§3.2", "options.user", option(CollabOptions, "user")),
    PaperSetting(
        "enforcement decided by",
        "model",
        f"§3.2; {CODE}prompts.py",
        "options.verdicts",
        option(CollabOptions, "verdicts"),
    ),
    PaperSetting(
        "TS grader",
        "judge",
        f"§3.3; {CODE}conversation_evaluator.py",
        "options.grader",
        option(CollabOptions, "grader"),
    ),
    PaperSetting(
        "prompts",
        "MSC's own (read from the checkout)",
        f"App. B; {CODE}prompts.py",
        "options.prompts_from",
        _prompts,
        "MSC's prompts are not shipped; ours say the same in other words: --prompts-from CHECKOUT",
    ),
    PaperSetting(
        "agent temperature",
        1.0,
        f"{CODE}agents/collaborator_agent.py",
        "options.agent_temperature",
        option(CollabOptions, "agent_temperature"),
    ),
    PaperSetting(
        "agent top_p",
        1.0,
        f"{CODE}agents/collaborator_agent.py (none set)",
        "options.agent_top_p",
        option(CollabOptions, "agent_top_p"),
    ),
    PaperSetting(
        "agent output",
        "text",
        f"{CODE}agents/collaborator_agent.py (JSON for Llama-3.3-70B-Instruct only)",
        "options.agent_format",
        _agent_format,
        "json when the agent is Llama-3.3-70B-Instruct, as MSC's code does",
        matches=_agent_format_fits,
    ),
    PaperSetting(
        "agent max tokens",
        2048,
        f"{CODE}agents/collaborator_agent.py",
        "options.agent_max_tokens",
        option(CollabOptions, "agent_max_tokens"),
    ),
    PaperSetting(
        "user sampling",
        {"temperature": 1.0, "max_tokens": 1024},
        f"{CODE}agents/user_agent.py",
        "(fixed)",
        _fixed(_sampling(MSC_USER_CONFIG)),
    ),
    PaperSetting(
        "judge sampling",
        {"temperature": 0.0, "max_tokens": 1024},
        f"{CODE}conversation_evaluator.py",
        "(fixed)",
        _fixed(_sampling(GRADER_CONFIG)),
    ),
    PaperSetting(
        "agent context limit",
        "16,384 tokens; the oldest messages dropped",
        f"{CODE}agents/collaborator_agent.py (truncate_messages)",
        "(the served model)",
        _fixed("the served model's window; at its end the session stops"),
        "rapport never cuts what the agent was told: a session that fills the "
        "window stops (stop reason context_full, counted in the report) and its "
        "draft is graded; serve a window of 16,384 tokens or more",
    ),
    PaperSetting(
        "memory",
        "reflection: one notes document",
        "§4.1",
        "memory_options.reflection.form",
        _form,
        "form list (capped notes) is the small preset's",
    ),
    PaperSetting(
        "notes placement",
        "the agent's system prompt",
        f"§4.1; {CODE}prompts.py (reflective_agent_system_prompt_no_json)",
        "memory_options.reflection.notes_in",
        _notes_in,
    ),
    PaperSetting(
        "per-turn pick of relevant notes",
        True,
        f"§4.1; {CODE}agents/collaborator_agent.py (proper scaffolding)",
        "memory_options.reflection.select",
        memory_option("reflection", "select", True),
    ),
    PaperSetting(
        "pick before any notes",
        True,
        f"{CODE}agents/collaborator_agent.py",
        "memory_options.reflection.pick_before_notes",
        memory_option("reflection", "pick_before_notes", True),
    ),
    PaperSetting(
        "TS",
        "the judge's accuracy of the user's final draft",
        "§3.3",
        "(the score)",
        _ts,
    ),
    PaperSetting(
        "UE",
        "user messages that enforce a preference",
        "§3.3; run.py",
        "(the score)",
        _fixed("user messages that enforce a preference"),
    ),
    PaperSetting(
        "Len",
        "messages, the agent's opening included",
        f"§3.3; {CODE}conversation_evaluator.py",
        "(the score)",
        _len,
    ),
    PaperSetting(
        "averaging",
        "per user over sessions, then over users",
        "§3.4",
        "(the report)",
        _fixed("per user over sessions, then over users"),
    ),
    PaperSetting(
        "Overall",
        "the mean of the five datasets' means",
        "Table 1",
        "(benchmarks/msc_grid.py)",
        _fixed("the mean of the five datasets' means"),
    ),
)
"""What MultiSessionCollab's paper and code fix, setting by setting (Table 1's protocol)."""
