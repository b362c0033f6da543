# The graph's score weights measured on dev: each value refits the ranker and runs the agent over
# the 12 dev sets (../2026-11-28-graph-values/run.py). Run from the repository root:
#     OUT=DIR HOMES=EVAL_OUT bash experiments/2026-11-29-graph-weights/sweep.sh
# HOMES is the --out of a full `apiatlas eval ... --keep-homes` (its dataset homes are reused);
# .apiatlas/train holds the training homes (a link to make train's --homes). Arguments, if any,
# replace the first round's values: each is "MODULE:NAME VALUE" in quotes.
set -eux
if [ $# -eq 0 ]; then
  set -- "apiatlas.rag.retrieval.graph:RESOURCE_POINTS 10.0" \
         "apiatlas.rag.retrieval.graph:RESOURCE_POINTS 5.0" \
         "apiatlas.rag.retrieval.graph:RESOURCE_POINTS 20.0" \
         "apiatlas.rag.retrieval.endpoint_fit:VERB_POINTS 10.0" \
         "apiatlas.rag.retrieval.endpoint_fit:VERB_POINTS 40.0" \
         "apiatlas.rag.retrieval.endpoint_fit:SHAPE_POINTS 0.0" \
         "apiatlas.rag.retrieval.endpoint_fit:SHAPE_POINTS 30.0"
fi
for spec in "$@"; do
  set -- $spec
  name=$(echo "$1" | cut -d: -f2 | tr A-Z a-z)-$2
  .venv/bin/python experiments/2026-11-28-graph-values/run.py "$1" "$2" "$OUT/$name" "$HOMES" \
    > "$OUT/$name.log" 2>&1
done
