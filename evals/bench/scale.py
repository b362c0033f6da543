"""``make bench`` (scale): ingest and ``ask`` as an API grows, on both graph backends.

Synthetic OpenAPI 3.0 specs of 1k, 3k, 6k and 10k operations, generated here with the shapes of
real APIs (resource collections with list/create/get/update/delete, nested collections, actions
on one item, shared ``$ref`` schemas, tags with descriptions, paging and filter parameters),
plus the largest real spec in ``../shared/data`` (Kubernetes). For each spec and graph backend
(SQLite, then a real Neo4j): ingest time split by stage, the ingest process's peak memory, and
``ask`` latency p50/p95 over questions about the spec's own resources, cold (the question's
embedding not cached). Every measurement is its own process, so each peak is its own.

Writes ``evals/results/bench-scale-<date>.md`` and a plot beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from time import perf_counter
from typing import Any

from apiatlas.evals.bench.ask import percentile, write_report
from apiatlas.evals.bench.cli import run_process

REPO = Path(__file__).resolve().parents[2]
SIZES = (1000, 3000, 6000, 10000)
QUESTIONS = 20
REPEAT = 3
# Bench data, not ranking knowledge: words to name synthetic resources with.
_NOUNS = (
    "account", "address", "alert", "allocation", "asset", "attachment", "audit", "balance",
    "batch", "booking", "budget", "campaign", "card", "carrier", "catalog", "certificate",
    "channel", "charge", "claim", "comment", "contact", "contract", "coupon", "credential",
    "customer", "dashboard", "device", "discount", "dispute", "document", "domain", "employee",
    "event", "export", "feed", "file", "folder", "fulfillment", "group", "import", "incident",
    "invoice", "item", "job", "label", "lead", "ledger", "license", "location", "log", "meeting",
    "member", "message", "metric", "note", "notification", "order", "package", "payment",
    "payout", "permission", "plan", "policy", "price", "product", "project", "promotion",
    "queue", "quote", "receipt", "record", "refund", "region", "report", "request", "reservation",
    "review", "role", "route", "rule", "schedule", "segment", "session", "shipment", "signature",
    "site", "snapshot", "subscription", "supplier", "survey", "task", "template", "ticket",
    "token", "transfer", "user", "vendor", "voucher", "warehouse", "webhook", "workflow",
)
_QUALIFIERS = (
    "", "billing", "shipping", "tax", "inventory", "loyalty", "marketing", "partner", "payroll",
    "compliance", "support", "identity", "analytics", "storage", "network", "pricing", "sales",
    "catalog", "media", "risk", "security", "team", "mobile", "retail", "wholesale",
)
_ACTIONS = ("cancel", "approve", "archive", "publish", "refresh", "verify")


def resources() -> Iterator[tuple[str, str]]:
    """``(group, resource)`` names, as many as the word lists give, in a fixed order."""
    for qualifier in _QUALIFIERS:
        for noun in _NOUNS:
            yield (qualifier or "core"), (f"{qualifier}_{noun}" if qualifier else noun)


def _schema(words: str) -> dict[str, Any]:
    """The component schema of one synthetic resource."""
    return {
        "type": "object",
        "description": f"A {words} of the account: what it is, who owns it and its state.",
        "required": ["name"],
        "properties": {
            "id": {"type": "string", "readOnly": True, "description": f"The {words} ID."},
            "name": {"type": "string", "description": f"A name for the {words}."},
            "status": {"type": "string", "enum": ["active", "pending", "closed"]},
            "owner_id": {"type": "string", "description": "The user who owns it."},
            "amount": {"$ref": "#/components/schemas/Money"},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            "created_at": {"type": "string", "format": "date-time"},
        },
    }


def _operations(group: str, resource: str, title: str, action: str
                ) -> list[tuple[str, str, dict[str, Any]]]:
    """``(path, method, operation)`` of one resource: list, create, get, update, delete and one
    ``action``."""
    words = resource.replace("_", " ")
    ref = {"$ref": f"#/components/schemas/{title}"}
    item_id = f"{resource}_id"
    base = f"/v1/{group}/{resource.replace('_', '-')}s"
    one = f"{base}/{{{item_id}}}"
    id_param = {"name": item_id, "in": "path", "required": True,
                "schema": {"type": "string"}, "description": f"The ID of the {words}."}
    body = {"required": True, "content": {"application/json": {"schema": ref}}}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
    common = {"tags": [group]}
    return [
        (base, "get", {**common, "operationId": f"list{title}s", "summary": f"List {words}s",
                       "description": f"Returns a page of {words}s, newest first.",
                       "parameters": [
                           {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                           {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                           {"name": "status", "in": "query", "schema": {"type": "string"}},
                       ],
                       "responses": {"200": {"description": "A page", "content": {
                           "application/json": {"schema": {
                               "$ref": "#/components/schemas/Page"}}}}}}),
        (base, "post", {**common, "operationId": f"create{title}",
                        "summary": f"Create a {words}",
                        "description": f"Creates a {words}. The name is required.",
                        "requestBody": body, "responses": ok}),
        (one, "get", {**common, "operationId": f"get{title}", "summary": f"Retrieve a {words}",
                      "parameters": [id_param], "responses": ok}),
        (one, "patch", {**common, "operationId": f"update{title}",
                        "summary": f"Update a {words}", "parameters": [id_param],
                        "requestBody": body, "responses": ok}),
        (one, "delete", {**common, "operationId": f"delete{title}",
                         "summary": f"Delete a {words}", "parameters": [id_param],
                         "responses": {"204": {"description": "Deleted"}}}),
        (f"{one}/{action}", "post", {
            **common, "operationId": f"{action}{title}", "summary": f"{action.title()} a {words}",
            "description": f"Marks the {words} as {action}d; this cannot be undone.",
            "parameters": [id_param], "responses": ok}),
    ]


def synthetic_spec(operations: int) -> dict[str, Any]:
    """An OpenAPI 3.0 document with exactly ``operations`` operations."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {
        "Money": {"type": "object", "description": "An amount of money in a currency.",
                  "properties": {"amount": {"type": "integer"}, "currency": {"type": "string"}}},
        "Page": {"type": "object", "description": "A page of results and the cursor of the next.",
                 "properties": {"cursor": {"type": "string"}, "total": {"type": "integer"}}},
    }
    tags: dict[str, str] = {}
    count = 0
    names = resources()
    while count < operations:
        try:
            group, resource = next(names)
        except StopIteration as e:
            raise ValueError(f"the word lists give fewer than {operations} operations") from e
        title = "".join(w.title() for w in resource.split("_"))
        tags.setdefault(group, f"Everything about {group} resources and their lifecycle.")
        schemas[title] = _schema(resource.replace("_", " "))
        action = _ACTIONS[len(paths) % len(_ACTIONS)]
        for path, method, op in _operations(group, resource, title, action):
            if count >= operations:
                break
            paths.setdefault(path, {})[method] = op
            count += 1
    return {
        "openapi": "3.0.3",
        "info": {"title": f"Synthetic {operations}", "version": "1.0"},
        "tags": [{"name": k, "description": v} for k, v in tags.items()],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def questions(spec: dict[str, Any], n: int = QUESTIONS) -> list[str]:
    """Questions about ``n`` operations spread over the spec, in its own words."""
    ops = [op for item in spec["paths"].values() for op in item.values()]
    step = max(1, len(ops) // n)
    return [f"How do I {op['summary'].lower()}?" for op in ops[::step][:n]]


def child(spec_path: Path, home: Path, graph: str, project: str) -> dict[str, Any]:
    """Ingest ``spec_path`` and time questions; run in its own process by :func:`measure`."""
    from apiatlas.atlas import ApiAtlas
    from apiatlas.config import Settings

    settings = replace(Settings.from_env(), home=home, project=project, graph=graph)
    spec = json.loads(spec_path.read_text(encoding="utf-8")) if spec_path.suffix == ".json" else {}
    asked = questions(spec) if "paths" in spec and "openapi" in spec else _real_questions()
    with ApiAtlas(settings) as atlas:
        report = atlas.ingest(openapi=[spec_path], project=project)
        atlas.ask(asked[0], project=project)  # opens the per-project caches once
        cold: list[float] = []
        for _ in range(REPEAT):
            for question in asked:
                getattr(atlas.embeddings, "clear", lambda: None)()
                started = perf_counter()
                atlas.ask(question, project=project)
                cold.append((perf_counter() - started) * 1000)
    return {"endpoints": report.endpoints, "seconds": report.seconds, "ask_ms": cold}


def _real_questions() -> list[str]:
    """Kubernetes: questions in plain words about its common objects."""
    return [f"How do I {verb} a {noun}?"
            for verb in ("create", "list", "delete", "replace")
            for noun in ("pod", "deployment", "service", "namespace", "secret")]


def measure(spec_path: Path, home: Path, graph: str, project: str) -> dict[str, Any]:
    """:func:`child` in a new process: its result and its own peak memory."""
    out = home / "result.json"
    run = run_process([sys.executable, "-m", "apiatlas.evals.bench.scale", "--child",
                       str(spec_path), "--home", str(home), "--graph", graph,
                       "--project", project, "--result", str(out)], env=dict(os.environ))
    if run.code != 0:
        # Recorded in the report, and the other measurements go on.
        last = [line for line in run.err.splitlines() if line.strip()][-1:] or ["no message"]
        return {"error": f"exit {run.code}: {last[0][:300]}", "stderr": run.err[-4000:],
                "peak_mib": run.peak_mib, "wall_s": run.seconds}
    found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    found["peak_mib"] = run.peak_mib
    found["wall_s"] = run.seconds
    return found


def run(shared: Path, sizes: tuple[int, ...], backends: tuple[str, ...], out: Path) -> str:
    """Every size on every backend; the Markdown report (and the plot, written to ``out``)."""
    results: dict[tuple[str, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        specs: list[tuple[str, Path]] = []
        for size in sizes:
            path = Path(tmp) / f"synthetic-{size}.json"
            path.write_text(json.dumps(synthetic_spec(size)), encoding="utf-8")
            specs.append((f"synthetic {size}", path))
        k8s = shared / "kubernetes/spec/swagger.json"
        if k8s.is_file():
            specs.append(("kubernetes", k8s))
        for backend in backends:
            with _graph_env(backend, Path(tmp) / f"server-{backend}"):
                for name, path in specs:
                    home = Path(tmp) / f"{backend}-{name.replace(' ', '-')}"
                    home.mkdir()
                    project = name.replace(" ", "-")
                    found = measure(path, home, backend, project)
                    results[(backend, name)] = found
                    print(f"{backend} {name}: {found['wall_s']:.0f} s {found.get('error', '')}",
                          flush=True)
                    # Kept as they come, so that a run cut short still leaves its figures.
                    out.mkdir(parents=True, exist_ok=True)
                    (out / f"bench-scale-{date.today().isoformat()}.json").write_text(
                        json.dumps([{"backend": b, "spec": n, **r}
                                    for (b, n), r in results.items()], indent=1),
                        encoding="utf-8")
    return _report(results, out)


@contextmanager
def _graph_env(backend: str, home: Path) -> Iterator[None]:
    """For ``neo4j``, a real server for the whole backend, its URI in ``NEO4J_URI``."""
    if backend != "neo4j":
        yield
        return
    from apiatlas.evals.bench.backends import neo4j

    home.mkdir(parents=True, exist_ok=True)
    with neo4j(home) as settings:
        os.environ["NEO4J_URI"] = settings.neo4j_uri
        try:
            yield
        finally:
            os.environ.pop("NEO4J_URI", None)


def _report(results: dict[tuple[str, str], dict[str, Any]], out: Path) -> str:
    lines = [
        f"# apiatlas scale benchmark, {date.today().isoformat()}",
        "",
        "Each row is one new process: ingest the spec into an empty home, then "
        f"{QUESTIONS} questions x {REPEAT}, cold (the question's embedding not cached).",
        "",
        "| backend | spec | operations | ingest s | load s | embed+index s | graph s | "
        "ranking index s | peak MiB | ask p50 ms | ask p95 ms |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    failed = {key: r for key, r in results.items() if "error" in r}
    results = {key: r for key, r in results.items() if key not in failed}
    for (backend, name), r in failed.items():
        lines.append(f"| {backend} | {name} | failed: {r['error']} | | | | | | "
                     f"{r['peak_mib']:.0f} | | |")
    for (backend, name), r in results.items():
        s, ask = r["seconds"], r["ask_ms"]
        lines.append(
            f"| {backend} | {name} | {r['endpoints']} | {s['total']:.1f} | {s['load']:.1f} | "
            f"{s['vectors']:.1f} | {s['graph']:.1f} | {s['ranking']:.1f} | "
            f"{r['peak_mib']:.0f} | {statistics.median(ask):.1f} | {percentile(ask, 95):.1f} |"
        )
    lines.append("")
    for backend in dict.fromkeys(b for b, _ in results):
        synthetic = sorted(
            (r["endpoints"], r) for (b, n), r in results.items()
            if b == backend and n.startswith("synthetic")
        )
        if len(synthetic) >= 2:
            (small, first), (large, last) = synthetic[0], synthetic[-1]
            per_op = [r["seconds"]["total"] / n for n, r in synthetic]
            lines.append(
                f"- {backend}: ingest seconds per operation from {small} to {large} ops: "
                + ", ".join(f"{x * 1000:.1f} ms" for x in per_op)
                + f"; ask p95 at {large} / at {small}: "
                f"**{percentile(last['ask_ms'], 95) / percentile(first['ask_ms'], 95):.2f}**."
            )
    plot = _plot(results, out)
    if plot is not None:
        lines += ["", f"![ingest and ask against size]({plot.name})"]
    return "\n".join(lines) + "\n"


def _plot(results: dict[tuple[str, str], dict[str, Any]], out: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for backend in dict.fromkeys(b for b, _ in results):
        rows = sorted((r["endpoints"], r) for (b, n), r in results.items()
                      if b == backend and n.startswith("synthetic"))
        xs = [n for n, _ in rows]
        left.plot(xs, [r["seconds"]["total"] for _, r in rows], marker="o", label=backend)
        right.plot(xs, [percentile(r["ask_ms"], 95) for _, r in rows], marker="o",
                   label=f"{backend} p95")
        right.plot(xs, [statistics.median(r["ask_ms"]) for _, r in rows], marker=".",
                   linestyle="--", label=f"{backend} p50")
    left.set(xlabel="operations", ylabel="ingest s", title="Ingest")
    right.set(xlabel="operations", ylabel="ask ms (cold)", title="ask", ylim=(0, None))
    left.legend()
    right.legend()
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"bench-scale-{date.today().isoformat()}.png"
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target


def main(argv: list[str] | None = None) -> None:
    """Run the scale benchmark, or (``--child``) one measurement of it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--backends", nargs="+", default=["embedded", "neo4j"])
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "results")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--graph", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        found = child(args.child, args.home, args.graph, args.project)
        args.result.write_text(json.dumps(found), encoding="utf-8")
        return
    started = perf_counter()
    report = run(args.shared, tuple(args.sizes), tuple(args.backends), args.out)
    report += f"\nWhole benchmark: {perf_counter() - started:.0f} s.\n"
    write_report(args.out, "bench-scale", report)


if __name__ == "__main__":
    main()
