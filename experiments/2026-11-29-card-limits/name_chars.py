"""How often ``NAME_CHARS`` cuts the ranker's name text, on the dev APIs (issue 35).

    .venv/bin/python experiments/2026-11-29-card-limits/name_chars.py

The name text (``rag/ranking/fields.py: name_text``) starts with the endpoint's summary, else the
first sentence of its description, cut at ``NAME_CHARS`` characters. For every endpoint node the
graph builder makes from each dev API, this compares ``name_text`` as shipped with the same text
with the limit lifted, and counts the names that differ. Dev datasets only; no question is read.
"""

from __future__ import annotations

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV
from apiatlas.graph.build.builder import build_api_batch
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.ranking import fields

LIFTED = 10**9

seen: set[str] = set()
total = cut = 0
for path in dataset_files(DEV):
    dataset = load_dataset(path)
    key = "|".join(dataset.sources.openapi)
    if key in seen:  # sample and sample-memory read the same API
        continue
    seen.add(key)
    nodes = [node for source in dataset.sources.openapi for spec in load_openapi(source)
             for node in build_api_batch(spec, project=path.stem).nodes
             if node.label == "Endpoint"]
    shipped = [fields.name_text(n) for n in nodes]
    kept, fields.NAME_CHARS = fields.NAME_CHARS, LIFTED
    try:
        lifted = [fields.name_text(n) for n in nodes]
    finally:
        fields.NAME_CHARS = kept
    over = sum(a != b for a, b in zip(shipped, lifted))
    total += len(nodes)
    cut += over
    longest = max((len(t) for t in lifted), default=0)
    print(f"{path.stem}: {over} of {len(nodes)} names cut at {kept} "
          f"(longest uncut name text {longest})")
print(f"all dev APIs: {cut} of {total}")
