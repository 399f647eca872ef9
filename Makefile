VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install install-dense install-all constraints local-model test-local-model run test test-all check bench serve deploy faults clean

# Installs at the versions lme-bench is tested with (constraints.txt), so a fresh clone gets the
# same packages as CI whatever PyPI has released since.
PIP := $(BIN)/pip install --disable-pip-version-check -c constraints.txt

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The optional dense/hybrid search extra. Torch first, so pip keeps that build; elsewhere pass
# TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu" for the CPU-only wheel.
install-dense: $(STAMP)
	$(PIP) torch==2.13.0 $(TORCH_PIP_ARGS)
	$(PIP) -e '.[dev,dense]'

# Every backend's extra (mem0, LangGraph/LangMem, Graphiti on Kuzu) with the dense one; the
# mcp-tools backend's reference server comes from npm when its tests first run.
install-all: $(STAMP)
	$(PIP) torch==2.13.0 $(TORCH_PIP_ARGS)
	$(PIP) -e '.[dev,all]'

# constraints.txt: this venv's versions, for installing a memory system's client beside
# lme-bench without moving Prefect's pins (`pip install -c constraints.txt chromadb`).
constraints: $(STAMP)
	$(BIN)/python scripts/constraints.py constraints.txt

# llama-cpp-python's OpenAI-compatible server (built from source once, ~11 min on 2 cores; the wheel
# is cached in ~/.cache/lme-bench) and a small model for configs/local.toml (docs/local-models.md).
local-model: $(STAMP)
	$(BIN)/python scripts/local_model.py install

# The whole pipeline through that real model (part of `make test-all` once it is installed).
test-local-model: $(STAMP)
	$(BIN)/pytest -q -rs -m realmodel

run: $(STAMP)
	$(BIN)/lme-bench run configs/default.toml

# The tests run in one process per core (pytest-xdist), each test file whole in one of them
# (its servers and fixtures shared as in a serial run); PARALLEL= runs them in this process.
PARALLEL ?= -n auto --dist loadfile

# The fast set: everything but the tests that start servers, run whole flows, a real Prefect
# server or a real model (the slow, integration and realmodel markers).
test: $(STAMP)
	$(BIN)/pytest -q -rs $(PARALLEL) -m "not slow and not integration and not realmodel"

# Every test (what CI runs).
test-all: $(STAMP)
	$(BIN)/pytest -q -rs $(PARALLEL)

# A Prefect server, a process worker and a file server of results/ on loopback, until Ctrl-C or
# SIGTERM; then `make deploy`. SERVE_MAKE_PID: make passes SIGINT on to no recipe, so the script
# watches make for one.
serve: $(STAMP)
	BIN=$(BIN) SERVE_MAKE_PID=$$PPID exec deployments/serve.sh

# The deployments of deployments/prefect.yaml, then the failure notification of
# deployments/automations.yaml, created or updated by name (left out, saying how to create its
# webhook block, while that block is missing).
DEPLOY_ENV = PREFECT_API_URL=$${PREFECT_API_URL:-http://127.0.0.1:4200/api} LME_BENCH_ROOT=$(CURDIR)
deploy: $(STAMP)
	$(DEPLOY_ENV) $(BIN)/prefect --no-prompt deploy --all --prefect-file deployments/prefect.yaml
	$(DEPLOY_ENV) $(BIN)/python deployments/automation.py

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# Fault injection: throttling, a killed memory server, SIGKILLed runs, a bad judge, unwritable results.
faults: $(STAMP)
	$(BIN)/pytest -q tests/faults

# The full-scale figures of docs/performance.md (≈ 15 minutes; data generated on first use).
bench: $(STAMP)
	$(BIN)/python perf/retrieval_scale.py --scale s --questions 500
	$(BIN)/python perf/retrieval_scale.py --scale s --questions 500 --flow
	$(BIN)/python perf/retrieval_scale.py --scale m --questions 2
	$(BIN)/python perf/sqlite_limits.py
	$(BIN)/python perf/official_side_by_side.py  # skips without LONGMEMEVAL_REPO
	$(BIN)/python perf/agent_ingestion.py --questions 5
	$(BIN)/python perf/prefect_flow.py --questions 500 --latency 0.2 --concurrency 16

clean:
	rm -rf results .pytest_cache .mypy_cache .ruff_cache
