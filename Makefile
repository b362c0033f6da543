# Two commands for a newcomer: `make demo` and `make test`. Both set up .venv first and are re-runnable.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Offline by default: nothing may reach a model hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: setup demo test bench eval clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, explicitly, so sentence-transformers does not pick its own build
	$(BIN)/pip install --quiet -c constraints.txt torch==2.15.0
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

demo: setup
	$(BIN)/python -m apiatlas.demo

test: setup
	$(BIN)/python -m pytest -ra $(PYTEST_ARGS)

# Ingest and ask timings, then project-memory lookups on SQLite and a throwaway PostgreSQL;
# evals/results/bench-<date>.md and bench-memory-<date>.md.
bench: setup
	$(BIN)/python -m apiatlas.evals.bench
	$(BIN)/python -m apiatlas.evals.bench_memory

# The shipped datasets, every strategy side by side, on the embedded graph and then on a local
# Neo4j; report.{json,md,png} in evals/results/{embedded,neo4j}.
eval: setup
	$(BIN)/apiatlas eval evals/datasets/*.yaml --out evals/results/embedded
	$(BIN)/apiatlas neo4j start --home .apiatlas/eval
	$(BIN)/apiatlas eval evals/datasets/*.yaml --graph neo4j --out evals/results/neo4j; \
	  rc=$$?; $(BIN)/apiatlas neo4j stop --home .apiatlas/eval; exit $$rc

clean:
	rm -rf $(VENV) .apiatlas
