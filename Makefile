# Set-up and checks. `make demo` and `make test` do everything on a fresh machine.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha256sum | cut -c1-12)
EXTRAS := llamacpp,embedded,embeddings,dev,prefix,tau,gym,stats

.PHONY: install demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) install -q -e '.[$(EXTRAS)]'
	# bfcl-eval without its heavy extras (its executable backends need only the stdlib + mpmath).
	$(PIP) install -q --no-deps 'bfcl-eval==2026.3.23'
	$(VENV)/bin/rapport models install
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/rapport demo

lint: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

typecheck: install
	$(VENV)/bin/mypy

unit: install
	$(VENV)/bin/pytest -m "not real_model"

test: install lint typecheck
	$(VENV)/bin/pytest

bench: install
	for f in benchmarks/*.py; do $(PY) $$f; done

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
