"""Check a memory dataset: it loads, every endpoint it names exists in the API's operations.tsv,
and it has the mix issue 54 asks for. Usage: check_memset.py DATASET.yaml OPERATIONS.tsv"""
import csv, re, sys
from collections import Counter
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from apiatlas.evals.dataset import load_dataset

path, ops_path = sys.argv[1], sys.argv[2]
ds = load_dataset(path)
ops = set()
with open(ops_path) as f:
    for row in csv.DictReader(f, delimiter="\t"):
        ops.add(f"{row['method'].upper()} {row['path']}")
norm = lambda e: re.sub(r"\{[^}]*\}", "{}", e.strip().split()[0].upper() + " " + e.strip().split()[1].rstrip("/"))
known = {norm(o) for o in ops}
bad = []
for m in ds.memories:
    for r in m.refs:
        if re.match(r"^[A-Za-z]+ /", r) and norm(r) not in known:
            bad.append(f"memory {m.key}: ref {r!r} is not an operation")
for c in ds.cases:
    for e in list(c.expected_endpoints) + list(c.acceptable_endpoints):
        if norm(e) not in known:
            bad.append(f"case {c.id}: endpoint {e!r} is not an operation")
kinds = Counter(m.kind for m in ds.memories)
print(f"{len(ds.memories)} memories {dict(kinds)}; superseding: {sum(bool(m.supersedes) for m in ds.memories)}; "
      f"without refs: {sum(not m.refs for m in ds.memories)}")
mem_cases = [c for c in ds.cases if c.expected_memories]
controls = [c for c in ds.cases if c.expected_memories == []]
print(f"{len(ds.cases)} cases: {len(mem_cases)} memory cases, {len(controls)} controls, "
      f"{sum(c.expected_memories is None for c in ds.cases)} others")
for b in bad:
    print("ERROR", b)
sys.exit(1 if bad else 0)
