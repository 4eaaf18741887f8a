# agtail — two commands a newcomer needs: `make start` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup dev start test lint bench clean

# agtail alone: what the daemon and the CLI run on.
$(BIN)/agtail: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	@touch $@

# The dev extras on top (pytest, mypy, ruff, hypothesis, …): only the tests and linters need them.
$(VENV)/.dev-extras: $(BIN)/agtail pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

setup: $(BIN)/agtail
dev: $(VENV)/.dev-extras

# Byte-code for agtail's own modules, kept beside them: an editable install writes none, and
# where PYTHONDONTWRITEBYTECODE is set every `agtail` command would compile its modules anew
# (~4x its start-up). Only what changed since is compiled again.
COMPILE := $(BIN)/python -m compileall -q -j 0 agtaild clients/python/agtail_client

## Set up and start the daemon on this machine's defaults (foreground; Ctrl-C stops it).
start: setup
	@$(COMPILE) >/dev/null
	$(BIN)/agtaild

## Run the whole test suite (lint + types + tests).
test: dev
	@$(COMPILE) >/dev/null
	$(BIN)/ruff check agtaild tests bench clients
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: dev
	$(BIN)/ruff check agtaild tests bench clients
	$(BIN)/ruff format --check agtaild tests bench clients || true
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
