# Two commands on a fresh machine:
#   make serve   set up (venv, package, kernels) and start the MCP server over stdio
#   make test    set up, lint (ruff), type-check (mypy, strict on server/) and run the whole test suite
#                (this is what .ci/run calls)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.context-kernel-installed

.PHONY: serve test setup bench clean

$(STAMP): pyproject.toml kernels/install.sh $(wildcard kernels/install.d/*.sh) $(wildcard kernels/*/*)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,analysis]'
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH bash kernels/install.sh
	touch $(STAMP)

setup: $(STAMP)

serve: $(STAMP)
	$(BIN)/context-kernel serve

test: $(STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/roundtrip.py

clean:
	rm -rf $(VENV)
