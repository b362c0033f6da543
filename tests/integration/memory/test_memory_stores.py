"""Project memory on the real stores: SqliteStore in a file and PostgresStore on a real server.

Every test runs on both backends, with the real local embeddings, and reads the raw tables where
what matters is what was written (isolation, scrubbing).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pysqlite3.dbapi2 as sqlite
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore

from apiatlas.config import Settings
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory import ProjectMemory
from apiatlas.rag.memory import store as store_module
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from apiatlas.rag.retrieval.pgvector import libpq_conninfo
from tests.clock import Clock

SQLITE_ROW = "SELECT value FROM store WHERE prefix = ? AND key = ?"
SQLITE_ROWS_WITH_KEYS = "SELECT prefix, key, value FROM store WHERE key IN ({})"
PG_ROW = "SELECT value::text FROM store WHERE prefix = %s AND key = %s"
PG_ROWS_WITH_KEYS = "SELECT prefix, key, value::text FROM store WHERE key = ANY(%s)"
PG_VECTOR_ROWS = "SELECT count(*) FROM store_vectors WHERE prefix = %s AND key = %s"

START = datetime(2026, 8, 3, 10, 0, tzinfo=timezone.utc)


@dataclass
class Backend:
    """An open memory store and how to read its raw rows."""

    name: str
    store: BaseStore
    settings: Settings

    def raw_row(self, namespace: tuple[str, ...], key: str) -> str:
        prefix = ".".join(namespace)
        if self.name == "sqlite":
            with sqlite.connect(str(self.settings.memory_path)) as conn:
                row = conn.execute(SQLITE_ROW, (prefix, key)).fetchone()
        else:
            with psycopg.connect(libpq_conninfo(self.settings.database_url or "")) as conn:
                row = conn.execute(PG_ROW, (prefix, key)).fetchone()
        assert row is not None, f"no raw row for {prefix}/{key}"
        return _text(row[0])

    def rows_with_keys(self, keys: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
        if self.name == "sqlite":
            with sqlite.connect(str(self.settings.memory_path)) as conn:
                query = SQLITE_ROWS_WITH_KEYS.format(", ".join("?" for _ in keys))
                rows = conn.execute(query, keys).fetchall()
        else:
            with psycopg.connect(libpq_conninfo(self.settings.database_url or "")) as conn:
                rows = conn.execute(PG_ROWS_WITH_KEYS, (keys,)).fetchall()
        return [(prefix, key, json.loads(_text(value))) for prefix, key, value in rows]


def _text(value: str | bytes) -> str:
    # SqliteStore writes orjson bytes (a BLOB); Postgres returns the jsonb as text.
    return value.decode() if isinstance(value, bytes) else value


@pytest.fixture(scope="module")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embeddings: Embeddings
) -> Iterator[Backend]:
    home = tmp_path_factory.mktemp(f"memory-{request.param}")
    if request.param == "sqlite":
        settings = Settings(home=home, memory="sqlite")
    else:
        settings = Settings(home=home, memory="postgres", database_url=request.getfixturevalue("pg_url"))
    store = open_memory_store(settings, embeddings)
    yield Backend(request.param, store, settings)
    close_memory_store(store)


def project_name() -> str:
    # The Postgres server outlives a module: every test writes to projects of its own.
    return f"p{uuid.uuid4().hex[:10]}"


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def memory(backend: Backend, clock: Clock) -> ProjectMemory:
    return ProjectMemory(backend.store, project_name(), clock=clock)


def test_semantic_recall_finds_the_right_memory(memory: ProjectMemory) -> None:
    locations = memory.remember(
        "We create locations with POST /v2/locations; v1 drops the timezone",
        kind="decision", refs=["POST /v2/locations"],
    )  # fmt: skip
    shipments = memory.remember(
        "Never call DELETE /shipments in production; cancel the shipment instead",
        kind="warning", refs=["DELETE /v2/shipments/{id}"],
    )  # fmt: skip
    memory.remember(
        "To onboard a carrier", kind="procedure",
        steps=["POST /v2/carriers", "POST /v2/carriers/{id}/accounts"],
    )  # fmt: skip
    memory.remember("Webhook deliveries are retried for three days", kind="fact")

    hits = memory.recall("How should I create a new location?")
    assert hits and hits[0].memory.id == locations.id
    assert hits[0].matched == "semantic" and hits[0].score >= 0.35
    hits = memory.recall("Can I delete a shipment in prod?")
    assert hits[0].memory.id == shipments.id
    assert memory.recall("What is the capital of Mongolia?") == []


def test_recall_at_answers_what_we_knew_last_month(memory: ProjectMemory, clock: Clock) -> None:
    old = memory.remember("Create locations with the v1 endpoint POST /v1/locations", kind="decision")
    last_month = clock.advance(days=5)
    clock.advance(days=35)
    new = memory.supersede(old.id, "Create locations with POST /v2/locations: v1 drops the timezone")
    question = "Which endpoint do we use to create locations?"

    assert [h.memory.id for h in memory.recall(question, at=last_month)] == [old.id]
    assert [h.memory.id for h in memory.recall(question)] == [new.id]
    assert memory.recall(question, at=START - timedelta(days=1)) == []
    assert [m.id for m in memory.list(at=last_month)] == [old.id]


def test_supersede_chain_and_forget_keep_the_history(
    backend: Backend, memory: ProjectMemory, clock: Clock
) -> None:
    v1 = memory.remember("Refunds go through POST /v1/refunds", kind="fact", refs=["POST /v1/refunds"])
    clock.advance(days=1)
    v2 = memory.supersede(v1.id, "Refunds go through POST /v2/refunds", refs=["POST /v2/refunds"])
    clock.advance(days=1)
    v3 = memory.supersede(v2.id, "Refunds go through POST /v2/refunds with an idempotency key")
    assert [m.id for m in memory.history(v1.id)] == [v1.id, v2.id, v3.id]
    assert memory.get(v3.id).refs == ["POST /v2/refunds"]

    forgotten_at = clock.advance(days=1)
    memory.forget(v3.id)
    assert memory.list() == []
    assert memory.recall("How do I refund a payment?") == []
    assert {m.id for m in memory.list(include_history=True)} == {v1.id, v2.id, v3.id}
    stored = json.loads(backend.raw_row(("apiatlas", memory.project, "memories"), v3.id))
    assert datetime.fromisoformat(stored["forgotten_at"]) == forgotten_at
    assert [m.id for m in memory.history(v3.id)] == [v1.id, v2.id, v3.id]


def test_projects_and_agent_types_never_leak(backend: Backend, clock: Clock) -> None:
    a, b = project_name(), project_name()
    acme = ProjectMemory(backend.store, a, clock=clock)
    acme_support = ProjectMemory(backend.store, a, agent_type="support", clock=clock)
    acme_billing = ProjectMemory(backend.store, a, agent_type="billing", clock=clock)
    other = ProjectMemory(backend.store, b, agent_type="support", clock=clock)
    text = "Refund requests need a ticket number before POST /v2/refunds"
    shared = acme.remember("All agents: create locations with v2", kind="decision")
    support_only = acme_support.remember(text, kind="procedure", scope="agent_type",
                                         refs=["POST /v2/refunds"])  # fmt: skip
    elsewhere = other.remember(text, kind="procedure", scope="agent_type", refs=["POST /v2/refunds"])

    assert {m.id for m in acme_support.list()} == {shared.id, support_only.id}
    assert {m.id for m in acme_billing.list()} == {shared.id}
    assert {m.id for m in other.list(include_history=True)} == {elsewhere.id}
    for reader in (acme_billing, acme):
        assert support_only.id not in {h.memory.id for h in reader.recall(text, refs=["POST /v2/refunds"])}
    assert [h.memory.id for h in other.recall(text, refs=["POST /v2/refunds"])] == [elsewhere.id]
    assert [h.memory.id for h in acme_support.recall(text)][:1] == [support_only.id]

    rows = backend.rows_with_keys([shared.id, support_only.id, elsewhere.id])
    where = {key: (prefix, value["project"], value["agent_type"]) for prefix, key, value in rows}
    assert where == {
        shared.id: (f"apiatlas.{a}.memories", a, None),
        support_only.id: (f"apiatlas.{a}.agent_types.support.memories", a, "support"),
        elsewhere.id: (f"apiatlas.{b}.agent_types.support.memories", b, "support"),
    }



def test_a_list_reads_every_page_and_get_many_stays_in_its_project(
    backend: Backend, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A list once stopped at its store search's limit (10,000 versions): a team's memory at
    # 10k memories with their history lost the rest without a word. Pages of 3 stand for it.
    monkeypatch.setattr(store_module, "LIST_PAGE", 3)
    mine = ProjectMemory(backend.store, project_name(), clock=clock)
    other = ProjectMemory(backend.store, project_name(), clock=clock)
    written = [mine.remember(f"Note {i} about shipments", kind="fact") for i in range(8)]
    closed = mine.supersede(written[0].id, "Note 0, revised")
    theirs = other.remember("Their note", kind="fact")

    assert len(mine.list()) == 8
    assert len(mine.list(include_history=True)) == 9
    ids = [written[3].id, closed.id, theirs.id, "mem_nosuchid000"]
    assert {m.id for m in mine.get_many(ids)} == {written[3].id, closed.id}


JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtYmlsbGluZyIsImV4cCI6MTc5OTk5OTk5OX0"
    ".q7Vd0kXk3b1m2QZ8f9sPz4YwHc6Lr5TnAa0eUj3Kx1o"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
# (note, the secret that must not be stored, what the stored text says was removed)
SECRETS = [
    ("Payouts use the live Stripe key sk_live_51NzQx7Lk2PmW9rTb4Yc8Vd3", "sk_live_51NzQx7Lk2PmW9rTb4Yc8Vd3", "stripe-key"),
    ("The nightly export runs as AKIAZ3MSJV5MJ4QKX7YB", "AKIAZ3MSJV5MJ4QKX7YB", "aws-access-key"),
    ("The export job has aws_secret_access_key = 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", "wJalrXUtnFEMI/K7MDENG", "aws-secret-key"),
    ("CI clones with ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "github-token"),
    (f"Call the billing API with Authorization: Bearer {JWT}", JWT, "bearer-token"),
    ("The sandbox admin login is ops, password: hunter2!Zeta", "hunter2!Zeta", "password"),
    (f"The webhook signing key:\n{PEM}", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t", "private-key"),
    ("Reports read postgres://reporter:Tr0ub4dor-3x@db.internal:5432/reports", "Tr0ub4dor-3x", "credentials"),
]  # fmt: skip


@pytest.mark.parametrize(("note", "secret", "label"), SECRETS, ids=[s[2] for s in SECRETS])
def test_secrets_never_reach_the_store(
    backend: Backend, memory: ProjectMemory, note: str, secret: str, label: str
) -> None:
    stored = memory.remember(note, kind="fact", steps=[f"again: {note}"], source=note)
    raw = backend.raw_row(("apiatlas", memory.project, "memories"), stored.id)
    assert secret not in raw
    assert f"[REDACTED:{label}]" in stored.text
    assert stored.scrubbed and len(stored.scrubbed) == 3  # text, step and source
    assert memory.get(stored.id).text == stored.text


def test_memories_persist_across_reopening(backend: Backend, embeddings: Embeddings) -> None:
    project = project_name()
    kept = ProjectMemory(backend.store, project).remember("Use sandbox keys in CI", kind="decision")
    reopened = open_memory_store(backend.settings, embeddings)
    try:
        again = ProjectMemory(reopened, project)
        assert [m.id for m in again.list()] == [kept.id]
        assert again.recall("Which keys does CI use?")[0].memory.id == kept.id
    finally:
        close_memory_store(reopened)
