# Two commands on a fresh machine:
#   make serve   set up (venv, package, kernels) and start the MCP server over stdio
#   make test    set up, lint (ruff), type-check (mypy, strict on server/) and run the whole test suite
#                (this is what .ci/run calls)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.context-kernel-installed
# Jupyter Enterprise Gateway for the gateway tests (tests/gateway_harness.py), in an environment of its
# own: it pins jupyter_client<7, the server needs 8.
GATEWAY_VENV := .venv-gateway
GATEWAY_STAMP := $(GATEWAY_VENV)/.installed
# The SSH test's kernel runs as another user, so its interpreter must be one that user can read:
# Debian's /usr/bin/python3, not a pyenv build under /root (mode 700).
REMOTE_PYTHON := $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo $(PYTHON))

.PHONY: serve test setup bench clean

# compileall: bytecode now, as a wheel's install does. An editable install leaves it to the first
# import, and with PYTHONDONTWRITEBYTECODE set every start would compile the package again (our imports
# before `initialize`: 35-43 ms from source, 18 ms from bytecode).
$(STAMP): pyproject.toml kernels/install.sh $(wildcard kernels/install.d/*.sh) $(wildcard kernels/*/*)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,analysis]'
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH bash kernels/install.sh
	$(BIN)/python -m compileall -q server/context_kernel >/dev/null
	touch $(STAMP)

# The SSH placement test's second 'host': its kernel Python (gateway_provisioners' launcher and ipykernel)
# in .venv-remote, reached through Debian's openssh-server (root only; the test says why it cannot run
# without).
$(GATEWAY_STAMP):
	test -x $(GATEWAY_VENV)/bin/python || $(PYTHON) -m venv $(GATEWAY_VENV)
	$(GATEWAY_VENV)/bin/python -m pip install -q --upgrade pip
	$(GATEWAY_VENV)/bin/python -m pip install -q 'jupyter_enterprise_gateway==3.3.0'
	test -x .venv-remote/bin/pip || $(REMOTE_PYTHON) -m venv .venv-remote || { [ "$$(id -u)" = 0 ] && \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq python3-venv && \
	  $(REMOTE_PYTHON) -m venv --clear .venv-remote; }
	.venv-remote/bin/python -m pip install -q 'gateway_provisioners==0.5.0' ipykernel
	if [ "$$(id -u)" = 0 ] && [ ! -x /usr/sbin/sshd ]; then \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq openssh-server; fi
	touch $(GATEWAY_STAMP)

setup: $(STAMP) $(GATEWAY_STAMP)

serve: $(STAMP)
	$(BIN)/context-kernel serve

# pytest on TEST_WORKERS xdist workers: the tests mostly wait on kernels starting, servers, subprocesses and
# sockets, so more workers than cores keep both cores of a 2-core machine busy (pytest there: 7m36s with 4,
# 7m57s with 3, 19m08s in one process; docs/architecture.md#tests). --dist loadfile: a module's tests run on
# one worker, in order, so what a module makes once for its tests (a module-wide kernel, the install routes'
# wheel and installs, an encoder's model) is made once per run, not once per worker.
TEST_WORKERS ?= 4
test: $(STAMP) $(GATEWAY_STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/roundtrip.py

clean:
	rm -rf $(VENV)
