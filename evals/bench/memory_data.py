"""Realistic project memories and questions for the memory benchmark, over the sample API.

Deterministic (seeded): every run writes the same memories and asks the same questions, so runs
compare. The memories are what a logistics team records over months: decisions, warnings,
procedures, facts and episodes about the sample API's endpoints.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from apiatlas.rag.memory.model import MemoryKind

ENDPOINTS: tuple[tuple[str, str], ...] = (
    ("POST /v2/locations", "create locations"),
    ("GET /v2/locations", "list locations"),
    ("POST /v2/locations/search", "search locations"),
    ("PATCH /v2/locations/{location_id}", "update a location"),
    ("DELETE /v2/locations/{location_id}", "delete a location"),
    ("POST /v1/locations", "create locations the old way"),
    ("POST /v2/carriers", "register carriers"),
    ("POST /v2/carriers/{carrier_id}/verify", "verify carriers"),
    ("PATCH /v2/carriers/{carrier_id}", "update carriers"),
    ("POST /v2/shipments", "book shipments"),
    ("GET /v2/shipments", "list shipments"),
    ("PATCH /v2/shipments/{shipment_id}", "change shipments"),
    ("DELETE /v2/shipments/{shipment_id}", "delete draft shipments"),
    ("POST /v2/shipments/{shipment_id}/cancel", "cancel shipments"),
    ("GET /v2/shipments/{shipment_id}/tracking-events", "read tracking events"),
    ("POST /v2/quotes", "request quotes"),
    ("POST /v2/quotes/{quote_id}/accept", "accept quotes"),
    ("POST /v2/webhooks", "subscribe webhooks"),
    ("POST /v2/webhooks/{webhook_id}/test", "test webhooks"),
    ("GET /v2/webhooks/{webhook_id}/deliveries", "inspect webhook deliveries"),
)
TEAMS = ("ERP", "warehouse", "billing", "customer care", "dispatch", "platform")
REASONS = (
    "the ERP only sends one address line",
    "finance reconciles on these ids",
    "it times out above 1,000 records",
    "the carrier portal caches the old values for an hour",
    "support needs the audit trail",
    "we hit the rate limit during the Monday peak",
    "the mobile app still reads the legacy fields",
    "our SLA with the retailer depends on it",
)
STATUSES = ("409", "422", "429", "500", "503")


@dataclass(frozen=True)
class BenchMemory:
    """One memory to record: the arguments of ``ProjectMemory.remember``."""

    text: str
    kind: MemoryKind
    refs: tuple[str, ...]
    steps: tuple[str, ...] = field(default=())
    importance: int = 5


def team_memories(count: int, seed: int = 7) -> list[BenchMemory]:
    """``count`` memories, cycling through the five kinds."""
    rng = random.Random(seed)
    out: list[BenchMemory] = []
    for i in range(count):
        (sig, task), (other, other_task) = rng.sample(ENDPOINTS, 2)
        team, reason = rng.choice(TEAMS), rng.choice(REASONS)
        kind = ("decision", "warning", "procedure", "fact", "episode")[i % 5]
        importance = rng.randint(2, 10)
        if kind == "decision":
            text = f"The {team} team uses {sig} to {task}, not {other}: {reason}."
            out.append(BenchMemory(text, "decision", (sig, other), importance=importance))
        elif kind == "warning":
            text = f"Never call {sig} from the {team} jobs in production; {reason}."
            out.append(BenchMemory(text, "warning", (sig,), importance=importance))
        elif kind == "procedure":
            steps = (f"Call {sig} to {task}", f"Then call {other} to {other_task}",
                     f"Tell the {team} channel when it is done")
            out.append(BenchMemory(f"How the {team} team does it when we {task}", "procedure",
                                   (sig, other), steps, importance))
        elif kind == "fact":
            text = f"For {task} the {team} team stores our own reference in metadata.{team[:3]}_ref."
            out.append(BenchMemory(text, "fact", (sig,), importance=importance))
        else:
            status = rng.choice(STATUSES)
            text = (f"In week {rng.randint(1, 52)} {sig} returned {status} for the {team} team "
                    f"because {reason}; we retried after 30 s and it went through.")
            out.append(BenchMemory(text, "episode", (sig,), importance=importance))
    return out


QUESTION_FORMS = (
    "How do I {task} for the {team} team?",
    "what's the right call to {task} for {team}?",
    "Is there anything {team} should know before we {task}?",
    "{team} asks: which endpoint do we use to {task}?",
    "we need to {task} from a nightly {team} job, what do we call",
    "What did we decide about how {team} should {task}?",
)


def questions(count: int, seed: int = 11) -> list[str]:
    """``count`` distinct developer questions (distinct, so none reuses a cached embedding)."""
    rng = random.Random(seed)
    pool = [form.format(task=task, team=team)
            for _, task in ENDPOINTS for form in QUESTION_FORMS for team in TEAMS]
    unique = list(dict.fromkeys(pool))
    rng.shuffle(unique)
    if count > len(unique):
        raise ValueError(f"at most {len(unique)} distinct questions, not {count}")
    return unique[:count]
