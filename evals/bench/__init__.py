"""``make bench``: the benchmarks, one module each (``python -m apiatlas.evals.bench.<name>``).

``ask`` (in-process ingest and ``ask`` timings), ``backends`` (embedded against production
stores), ``memory`` (project-memory lookups), ``cli`` (the CLI in new processes), ``scale``
(synthetic specs of 1k-10k operations) and ``serve`` (``apiatlas serve`` under load). Each
writes a dated report to ``evals/results/``. Not shipped in the wheel: importable from a source
checkout installed with ``pip install -e``.
"""
