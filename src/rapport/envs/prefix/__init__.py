"""PrefIx: interaction preferences as explicit tool calls on BFCL multi-turn tasks, with task
accuracy, preference alignment and a multi-judge UX score with its reliability."""

from rapport.prefs.prefix import (
    InteractionTool,
    Setting,
    all_settings,
    get_setting,
    interaction_tools,
)
from rapport.users.prefix import END_TOKEN, PreferenceLeak, UserSimulator, leaked_terms

from ._alignment import Alignment, Step, align
from ._benchmark import PrefixBenchmark
from ._checker import Accuracy, check_accuracy, replay_reference, replay_turns
from ._coarsen import Coarsened, coarsen, required_literals
from ._executor import CallRefused, ExecutionResult, SafeExecutor, parse_call
from ._failures import FailurePlan, plan_failures
from ._options import PrefixOptions, combined_users, eligible, ux_dimensions
from ._paper_tasks import FixedTask, FixedTasks, PaperTasks, open_paper_tasks
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

__all__ = [
    "END_TOKEN",
    "Accuracy",
    "Alignment",
    "BfclTask",
    "CallRefused",
    "Coarsened",
    "ExecutionResult",
    "FailurePlan",
    "FixedTask",
    "FixedTasks",
    "InteractionTool",
    "PaperTasks",
    "PreferenceLeak",
    "PrefixBenchmark",
    "PrefixOptions",
    "SafeExecutor",
    "Setting",
    "Step",
    "TaskData",
    "TaskDataError",
    "UserSimulator",
    "align",
    "all_settings",
    "check_accuracy",
    "coarsen",
    "combined_users",
    "eligible",
    "get_setting",
    "installed_task_data",
    "interaction_tools",
    "leaked_terms",
    "load_tasks",
    "open_paper_tasks",
    "open_task_data",
    "parse_call",
    "plan_failures",
    "replay_reference",
    "replay_turns",
    "required_literals",
    "system_tools",
    "task_by_id",
    "ux_dimensions",
]
