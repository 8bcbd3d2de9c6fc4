"""Token cost counted with the agent model's tokenizer where its provider has one, else as
characters / 4; each outcome and the report say which."""

from __future__ import annotations

import pytest

from rapport.envs import Condition
from rapport.envs.mpt import (
    TOKEN_METHOD,
    MPTBenchmark,
    MPTEvalOutcome,
    MPTEvalTask,
    MPTOptions,
    TokenCounter,
    count_tokens,
)
from rapport.eval import play_session
from rapport.llm import Completion, Model, ModelAPI, ModelRoles, Request, ScriptedAPI
from rapport.log import ContextEvent, RecallEvent, SessionRecord
from rapport.memory import create_memory


class WordTokens(ModelAPI):
    """``scripted/auto`` with a tokenizer: one token per whitespace-separated word."""

    def __init__(self) -> None:
        self.inner = ScriptedAPI.from_spec("auto")
        self.name = "scripted/words"

    async def complete(self, request: Request) -> Completion:
        return await self.inner.complete(request)

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())


def _memory_text(record: SessionRecord) -> str:
    context = [e.text for e in record.events_of(ContextEvent)]
    recall = [e.text for e in record.events_of(RecallEvent)]
    return "".join(context[-1:] + recall[-1:])


async def _evals(api: ModelAPI) -> tuple[MPTBenchmark, list[tuple[SessionRecord, str]]]:
    bench = MPTBenchmark(MPTOptions(max_eval=2))
    roles = ModelRoles({"all": api})
    memory = Condition(name="rag", memory="rag")
    mem = create_memory("rag", roles)
    user = bench.users(1, 5)[0]
    out = []
    for spec in bench.sessions(user, 1, 5):
        record = await play_session(bench, spec, user, models=roles, memory=mem, condition=memory)
        if isinstance(spec.task, MPTEvalTask):
            out.append((record, spec.task.history_text))
    return bench, out


async def test_a_provider_with_a_tokenizer_counts_both_sides_with_it() -> None:
    bench, evals = await _evals(WordTokens())
    assert evals
    for record, history in evals:
        assert record.status == "ok"
        outcome = record.outcome
        assert isinstance(outcome, MPTEvalOutcome)
        memory = _memory_text(record)
        assert memory  # rag recalled something from the history
        assert outcome.token_method == "tokenizer: scripted/words"
        assert outcome.context_tokens == len(memory.split()) != count_tokens(memory)
        assert outcome.full_history_tokens == len(history.split())
        assert record.scores["context_tokens"] == outcome.context_tokens
        ratio = outcome.context_tokens / outcome.full_history_tokens
        assert record.scores["token_ratio"] == pytest.approx(ratio)
    titles = [t.title for t in bench.report_tables([r for r, _ in evals])]
    assert any("tokens: tokenizer: scripted/words" in t for t in titles)


async def test_without_a_tokenizer_it_counts_characters_and_says_so() -> None:
    bench, evals = await _evals(ScriptedAPI.from_spec("auto"))
    assert evals
    for record, history in evals:
        assert record.status == "ok"
        outcome = record.outcome
        assert isinstance(outcome, MPTEvalOutcome)
        assert outcome.token_method == TOKEN_METHOD
        assert outcome.context_tokens == count_tokens(_memory_text(record))
        assert outcome.full_history_tokens == count_tokens(history)
    titles = [t.title for t in bench.report_tables([r for r, _ in evals])]
    assert any(f"tokens: {TOKEN_METHOD}" in t for t in titles)


def test_the_counter_keeps_a_history_count_and_falls_back_without_a_model() -> None:
    counter = TokenCounter(Model(WordTokens()))
    assert counter.count("one two three") == (3, "tokenizer: scripted/words")
    assert counter.count_kept("a b") == (2, "tokenizer: scripted/words")
    assert TokenCounter(None).count("abcdefgh") == (2, TOKEN_METHOD)


@pytest.mark.real_model
def test_the_embedded_model_counts_with_its_own_vocabulary() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from rapport.llm import ModelError, create_api

    try:
        api = create_api("llamacpp/qwen2.5-coder-0.5b")
    except ModelError as exc:
        pytest.skip(f"embedded model not available: {exc}")
    assert api.path is not None
    text = 'user: a table for two at 7 pm, somewhere cheap\ncall: FindRestaurants(city="San Jose")'
    n, method = TokenCounter(Model(api)).count(text)
    full = llama_cpp.Llama(model_path=str(api.path), n_ctx=64, verbose=False)
    try:
        assert n == len(full.tokenize(text.encode(), add_bos=False, special=False))
    finally:
        full.close()
    assert method == "tokenizer: llamacpp/qwen2.5-coder-0.5b"
