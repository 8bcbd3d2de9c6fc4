"""Several endpoints serving one model: each request goes to the least busy one."""

from __future__ import annotations

from collections.abc import Sequence

from ._model import Completion, ModelAPI, Request, TextSink
from ._types import ModelError


class SpreadAPI(ModelAPI):
    """Spreads requests over providers that serve the same model (one per serving node):
    each request goes to the one with the fewest requests outstanding (ties: the first).

    Args:
        apis: the providers, one per endpoint; they must serve the same model.
    """

    def __init__(self, apis: Sequence[ModelAPI]) -> None:
        if not apis:
            raise ValueError("SpreadAPI needs at least one provider")
        self.apis = list(apis)
        self.name = self.apis[0].name
        self.outstanding = [0] * len(self.apis)
        self.sent = [0] * len(self.apis)
        self.base_url = ",".join(api.base_url for api in self.apis)
        """The endpoints, comma separated (credentials taken out by each provider)."""

    def check_ready(self) -> None:
        """Check every endpoint (see `OpenAIAPI.check_ready`).

        Raises:
            ModelError: one line naming each endpoint that is not ready.
        """
        failures: list[str] = []
        for api in self.apis:
            try:
                api.check_ready()
            except ModelError as exc:
                failures.append(str(exc))
        if failures:
            raise ModelError(
                f"{len(failures)} of {len(self.apis)} endpoints not ready: " + "; ".join(failures)
            )

    def count_tokens(self, text: str) -> int | None:
        """Tokens in the served model's tokenizer, as the first provider counts them."""
        return self.apis[0].count_tokens(text)

    async def complete(self, request: Request) -> Completion:
        return await self._on_least_busy(request, None)

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        """Streamed by the least busy endpoint."""
        return await self._on_least_busy(request, on_text)

    async def _on_least_busy(self, request: Request, on_text: TextSink | None) -> Completion:
        i = min(range(len(self.apis)), key=lambda k: self.outstanding[k])
        self.outstanding[i] += 1
        self.sent[i] += 1
        try:
            api = self.apis[i]
            if on_text is None:
                return await api.complete(request)
            return await api.stream(request, on_text)
        finally:
            self.outstanding[i] -= 1
