"""``make bench``'s memory benchmark runs end to end, at a size a test can afford: every row
measured on both memory backends (SQLite and a throwaway Postgres), the targets judged."""

from __future__ import annotations

import re
from pathlib import Path

from apiatlas.evals.bench.memory import ROWS, main


def test_the_memory_bench_measures_every_row_on_both_backends(tmp_path: Path) -> None:
    main(["--sizes", "30", "--out", str(tmp_path)])
    (report,) = tmp_path.glob("bench-memory-*.md")
    text = report.read_text(encoding="utf-8")
    for row in ROWS:
        cells = re.search(rf"\| 30 \| {re.escape(row)} \| ([^\n]+) \|\n", text)
        assert cells, f"no row {row!r} at 30 memories:\n{text}"
        values = [c.strip() for c in cells.group(1).split("|")]
        assert len(values) == 4 and all(re.fullmatch(r"\d+\.\d", v) for v in values), cells
    assert re.search(r"\| up to 30 \| \d+ \| \d+ \|", text)  # writes per second, both backends
    assert re.search(r"- SQLite: lookup p95 [\d.]+ ms \((meets|misses)", text)
    assert re.search(r"- Postgres: lookup p95 [\d.]+ ms \((meets|misses)", text)
