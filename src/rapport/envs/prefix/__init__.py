"""PrefIx: interaction preferences as explicit tool calls on BFCL multi-turn tasks, with task
accuracy, preference alignment and a multi-judge UX score with its reliability."""

from ._alignment import Alignment, Step, align
from ._benchmark import PrefixBenchmark
from ._checker import Accuracy, check_accuracy, replay_reference, replay_turns
from ._coarsen import Coarsened, coarsen, required_literals
from ._executor import CallRefused, ExecutionResult, SafeExecutor, parse_call
from ._failures import FailurePlan, plan_failures
from ._options import PrefixOptions, combined_users, eligible, ux_dimensions
from ._paper_tasks import FixedTask, FixedTasks, PaperTasks, open_paper_tasks
from ._rubric import JudgeRubric, RubricError, own_rubric, rubric_from
from ._settings import (
    Category,
    InteractionTool,
    Needs,
    PatternRule,
    Setting,
    all_settings,
    control_tool_names,
    dimensions,
    extra_settings,
    function_name,
    get_setting,
    get_tool,
    interaction_tool_names,
    interaction_tools,
    split_items,
)
from ._simulator import (
    DONE,
    GO_ON,
    PREFIX_END_TOKEN,
    PreferenceLeak,
    PrefixUserSimulator,
    is_end,
    leaked_terms,
    slips_out_of_role,
)
from ._task_data import (
    TaskData,
    TaskDataError,
    installed_task_data,
    load_tasks,
    open_task_data,
    system_tools,
    task_by_id,
)
from ._tasks import BfclTask
from ._types import PrefixOutcome, PrefixTask, SettingAlignment

__all__ = [
    "DONE",
    "GO_ON",
    "PREFIX_END_TOKEN",
    "Accuracy",
    "Alignment",
    "BfclTask",
    "CallRefused",
    "Category",
    "Coarsened",
    "ExecutionResult",
    "FailurePlan",
    "FixedTask",
    "FixedTasks",
    "InteractionTool",
    "JudgeRubric",
    "Needs",
    "PaperTasks",
    "PatternRule",
    "PreferenceLeak",
    "PrefixBenchmark",
    "PrefixOptions",
    "PrefixOutcome",
    "PrefixTask",
    "PrefixUserSimulator",
    "RubricError",
    "SafeExecutor",
    "Setting",
    "SettingAlignment",
    "Step",
    "TaskData",
    "TaskDataError",
    "align",
    "all_settings",
    "check_accuracy",
    "coarsen",
    "combined_users",
    "control_tool_names",
    "dimensions",
    "eligible",
    "extra_settings",
    "function_name",
    "get_setting",
    "get_tool",
    "installed_task_data",
    "interaction_tool_names",
    "interaction_tools",
    "is_end",
    "leaked_terms",
    "load_tasks",
    "open_paper_tasks",
    "open_task_data",
    "own_rubric",
    "parse_call",
    "plan_failures",
    "replay_reference",
    "replay_turns",
    "required_literals",
    "rubric_from",
    "slips_out_of_role",
    "split_items",
    "system_tools",
    "task_by_id",
    "ux_dimensions",
]
