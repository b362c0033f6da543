"""Per dataset and strategy, the figures that differ between two `apiatlas eval` reports, and
the means by group (training dev, validation, test).

    python experiments/2026-11-28-one-bm25/compare.py BEFORE/report.json AFTER/report.json \
        [agent,hybrid,bm25]
"""
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
VAL = {"docusign", "figma", "intercom"}
def group(name, split):
    return "test" if split == "test" else ("validation" if name in VAL else "dev")
M = ["top1", "top1_acceptable", "recall@5", "primary_precision", "abstention_accuracy",
     "false_abstention"]
strategies = sys.argv[3].split(",") if len(sys.argv) > 3 else ["agent", "hybrid", "bm25"]
for strat in strategies:
    print(f"## {strat}")
    groups = {}
    for name, info in a["datasets"].items():
        if strat not in a["results"][name]: continue
        g = group(name, info["split"])
        ra, rb = a["results"][name][strat], b["results"][name][strat]
        groups.setdefault(g, []).append((ra, rb))
        diff = [f"{m} {ra[m]:.3f}->{rb[m]:.3f}" for m in M if ra.get(m) != rb.get(m)]
        print(f"  {g:10} {name:14} " + ("; ".join(diff) if diff else "same"))
    for g, rows in groups.items():
        line = []
        for m in M:
            x = sum(r[0][m] or 0 for r in rows) / len(rows)
            y = sum(r[1][m] or 0 for r in rows) / len(rows)
            line.append(f"{m} {x:.3f}->{y:.3f}")
        print(f"  MEAN {g} ({len(rows)}): " + "; ".join(line))
