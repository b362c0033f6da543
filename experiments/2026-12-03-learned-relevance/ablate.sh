#!/bin/bash
# The answer-level ablation: for each feature group, the relevance model fitted without it
# (python -m apiatlas.evals.memory_relevance --without GROUP), then apiatlas eval on the dev
# memory sets and the test memory set (reported only) with that model in place of the shipped one.
#   experiments/2026-12-03-learned-relevance/ablate.sh OUT_DIR [GROUP ...]
set -euo pipefail
out=$1; shift
groups=${*:-similarity words graph memory}
mkdir -p "$out"
for g in $groups; do
  .venv/bin/python -m apiatlas.evals.memory_relevance --without "$g" --out "$out/relevance-$g.json" \
    > "$out/fit-$g.txt"
  .venv/bin/python -c "
import sys
from pathlib import Path
import apiatlas.rag.review.relevance as r
r.ARTIFACT = Path(sys.argv[1])
from apiatlas.cli import main
sys.exit(main(['eval', *sys.argv[3:], '--strategies', 'agent', '--out', sys.argv[2]]))
" "$out/relevance-$g.json" "$out/eval-$g" evals/datasets/dev/*memory*.yaml evals/datasets/test/memory-square.yaml \
    > "$out/eval-$g.log" 2>&1
done
echo done
