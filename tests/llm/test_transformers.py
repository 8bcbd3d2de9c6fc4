from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from rapport.llm import (
    GenerateConfig,
    Message,
    Model,
    ModelError,
    ModelRoles,
    OutputValidationError,
    create_api,
    record_calls,
)

pytest.importorskip("transformers")

from rapport.train import build_tiny_model

WORDS = 'hello there the user wants bullet points and short replies { } : " name'


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "lm", [WORDS])


def _model(tiny: Path) -> Model:
    return ModelRoles({"memory": f"transformers/{tiny}"}).get("memory")


HELLO = [Message(role="user", content="hello there")]


async def test_greedy_is_deterministic_and_accounted(tiny):
    model = _model(tiny)
    config = GenerateConfig(max_tokens=8)
    with record_calls() as calls:
        first = await model.generate(HELLO, config=config)
        second = await model.generate(HELLO, config=config)
    assert first.text == second.text
    assert first.usage.completion_tokens == 8
    assert first.usage.prompt_tokens > 2
    assert calls[0].model == f"transformers/{tiny}" and calls[0].role == "memory"


async def test_seeded_sampling_repeats_and_seeds_differ(tiny):
    model = _model(tiny)
    texts = [
        (
            await model.generate(
                HELLO, config=GenerateConfig(max_tokens=12, temperature=1.0, seed=s)
            )
        ).text
        for s in (1, 1, 2)
    ]
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


async def test_stop_strings_cut_the_reply(tiny):
    model = _model(tiny)
    full = await model.generate(
        HELLO, config=GenerateConfig(max_tokens=12, temperature=1.0, seed=5)
    )
    word = full.text.split()[3]
    cut = await model.generate(
        HELLO, config=GenerateConfig(max_tokens=12, temperature=1.0, seed=5, stop=(word,))
    )
    assert word not in cut.text and full.text.startswith(cut.text.strip())


class Reply(BaseModel):
    name: str


async def test_schema_output_is_validated_and_retried(tiny):
    api = create_api(f"transformers/{tiny}")
    model = Model(api, role="judge")
    with pytest.raises(OutputValidationError, match="3 attempts"):
        await model.generate(HELLO, schema=Reply, config=GenerateConfig(max_tokens=6))


def test_bad_spec_and_missing_checkpoint(tmp_path):
    with pytest.raises(ModelError, match="unknown transformers options"):
        create_api("transformers/x", colour="red")
    api = create_api(f"transformers/{tmp_path / 'missing'}")
    with pytest.raises(ModelError, match="cannot load"):
        api.load()  # type: ignore[attr-defined]
