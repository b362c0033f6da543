"""How often each hand-set limit of the composed answer cuts something, on the dev answers
(issue 35).

    .venv/bin/python experiments/2026-11-29-answer-limits/measure.py REPORT.json [OUT.json]

``REPORT.json`` is an ``apiatlas eval ... --keep-homes`` report; the script reads its dev cases
(the agent's answers: what each presented and which endpoints were primary) and the knowledge
graph and vector store of each dev home. It counts, for the composer's and the evidence's
limits, how many answers, endpoints or passages each one cuts. It reads no question text and
no test dataset.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.graph.backends import open_graph_store
from apiatlas.rag.answer import composer, evidence


def share(values: list[int], limit: int) -> dict[str, float | int]:
    over = sum(v > limit for v in values)
    return {"limit": limit, "items": len(values), "over": over,
            "share_over": round(over / len(values), 3) if values else 0.0,
            "median": statistics.median(values) if values else 0, "max": max(values, default=0)}


def main(report_path: Path, out: Path | None) -> None:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    dev = {name for name, d in report["datasets"].items() if d["split"] == "dev"}
    primaries: list[int] = []
    required_fields: list[int] = []
    inputs: list[int] = []
    seen: set[tuple[str, str]] = set()
    for name in sorted(dev):
        home = Path(report["datasets"][name]["home"])
        graph = open_graph_store(Settings(home=home))
        by_label = {f"{r.method} {r.path}": r.key for r in graph.find_endpoints(name, limit=100_000)}
        for case in report["cases"]:
            if case["dataset"] != name or case["strategy"] != "agent" or not case["primary"]:
                continue
            primaries.append(len(case["primary"]))
            for label in case["primary"]:
                if (name, label) in seen or label.split("#")[0] not in by_label:
                    continue
                seen.add((name, label))
                detail = graph.get_endpoint(name, by_label[label.split("#")[0]])
                if detail is None:
                    continue
                required_fields.append(sum(f.required for f in detail.request_fields))
                inputs.append(len(detail.parameters) + len(detail.request_fields))
    passages: list[int] = []
    for name in sorted(dev):
        data = report["datasets"][name]
        if not data["doc_chunks"]:
            continue
        store = ApiAtlas(settings=Settings(home=Path(data["home"]))).vector_store
        got = store.get(where={"kind": "doc"}, include=["documents"])  # Chroma's own read
        passages += [len(text) for text in got["documents"]]
        break  # sample and sample-memory index the same guides
    results = {
        "MAX_EXAMPLES (primaries per answer)": share(primaries, composer.MAX_EXAMPLES),
        "MAX_FIELDS (required body fields per primary)": share(required_fields, composer.MAX_FIELDS),
        "MAX_INPUTS (parameters and body fields per primary)": share(inputs, evidence.MAX_INPUTS),
        "PASSAGE_CHARS (guide passage characters)": share(passages, composer.PASSAGE_CHARS),
        "GUIDE_PASSAGE_CHARS (guide passage characters)": share(passages, composer.GUIDE_PASSAGE_CHARS),
        "primaries per answer, counted": dict(sorted(Counter(primaries).items())),
    }
    print(json.dumps(results, indent=1))
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
