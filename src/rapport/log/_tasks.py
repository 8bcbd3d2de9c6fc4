"""What a session is about: `SessionSpec.task` is a subclass of `BaseTask`.

A task is read by its own benchmark only. Each benchmark defines its task types in its own
folder; they register by ``kind`` when defined.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, SerializeAsAny

from ._kinds import KindRegistry

TASKS: KindRegistry[BaseTask] = KindRegistry("task")


class BaseTask(BaseModel):
    """Shared by every task."""

    kind: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        TASKS.add(cls)


class GenericTask(BaseTask):
    """A task of a kind no loaded module registered: every field is kept."""

    model_config = ConfigDict(extra="allow")
    kind: str = "generic"


TASKS.fallback = GenericTask

Task = Annotated[SerializeAsAny[BaseTask], BeforeValidator(TASKS.parse)]
"""A task field: any registered task type, read back by its ``kind``."""
