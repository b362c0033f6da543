"""How often ``NAME_CHARS`` cuts the ranker's name text, on the dev APIs (issue 35).

    .venv/bin/python experiments/2026-11-29-card-limits/name_chars.py

The name text (``rag/ranking/fields.py: name_text``) starts with the endpoint's summary, else the
first sentence of its description, cut at ``NAME_CHARS`` characters. For every endpoint of every
dev API, this counts the heads longer than the limit, with the same rule. Dev datasets only; no
question is read.
"""

from __future__ import annotations

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.ranking.fields import _SENTENCE, NAME_CHARS

seen: set[str] = set()
total = cut = 0
for path in dataset_files(DEV):
    dataset = load_dataset(path)
    key = "|".join(dataset.sources.openapi)
    if key in seen:  # sample and sample-memory read the same API
        continue
    seen.add(key)
    endpoints = [e for source in dataset.sources.openapi for s in load_openapi(source)
                 for e in s.endpoints]
    heads = []
    for e in endpoints:
        head = str(e.summary or "").strip()
        if not head:
            head = _SENTENCE.split(str(e.description or "").strip(), maxsplit=1)[0]
        heads.append(head)
    over = [h for h in heads if len(h) > NAME_CHARS]
    total += len(heads)
    cut += len(over)
    longest = max((len(h) for h in heads), default=0)
    print(f"{path.stem}: {len(over)} of {len(heads)} heads over {NAME_CHARS} (longest {longest})")
print(f"all dev APIs: {cut} of {total}")
