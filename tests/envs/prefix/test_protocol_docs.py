"""docs/prefix.md's protocol table is what ``rapport protocol prefix --format markdown``
prints for the defaults; the rows name the paper's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")

from rapport.cli._protocol import markdown
from rapport.envs import protocol_rows
from rapport.envs.prefix import PrefixBenchmark
from rapport.log import ExperimentConfig

DOCS = Path(__file__).parents[3] / "docs" / "prefix.md"


def _defaults() -> list[str]:
    rows = protocol_rows(PrefixBenchmark, ExperimentConfig(benchmark="prefix"))
    return markdown(rows).strip().splitlines()


def test_the_docs_table_is_the_protocol_command_output() -> None:
    text = DOCS.read_text("utf-8")
    block = text.split("<!-- protocol: prefix -->\n", 1)[1].split("<!-- /protocol -->", 1)[0]
    assert block.strip().splitlines() == _defaults()


def test_rows_one_to_nine_are_the_same_or_give_a_reason() -> None:
    rows = protocol_rows(PrefixBenchmark, ExperimentConfig(benchmark="prefix"))
    numbered = [r for r in rows if r.setting.name[:1].isdigit()]
    assert {r.setting.name.split(".", 1)[0] for r in numbered} >= set("1234579")
    for row in numbered:
        assert row.same or row.setting.note, row.setting.name
    same = {r.setting.name for r in rows if r.same}
    assert "5. judging" in same and "tool-use accuracy matching" in same


def test_a_config_off_the_paper_shows_in_its_rows() -> None:
    config = ExperimentConfig(
        benchmark="prefix", options={"matching": "canonical", "judging": "all_at_once"}
    )
    differing = {r.setting.name for r in protocol_rows(PrefixBenchmark, config) if not r.same}
    assert {"tool-use accuracy matching", "5. judging"} <= differing
