"""A run's concurrency reaches the providers that batch calls, built before or after."""

from __future__ import annotations

from rapport.llm import Completion, ModelAPI, ModelRoles, Request


class Batching(ModelAPI):
    def __init__(self, name: str) -> None:
        self.name = name
        self.concurrency = 1

    def set_concurrency(self, concurrency: int) -> None:
        self.concurrency = concurrency

    async def complete(self, request: Request) -> Completion:
        return Completion(text="ok")


def test_providers_hear_the_runs_concurrency() -> None:
    early, late = Batching("early"), Batching("late")
    roles = ModelRoles({"agent": early, "user": late})
    roles.get("agent")
    roles.set_concurrency(4)
    assert early.concurrency == 4
    roles.get("user")
    assert late.concurrency == 4
