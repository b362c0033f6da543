"""Weak training pairs from one spec: a field of an operation as the query, the operation's card
(as the product embeds it) with that field masked as the positive, and a hard negative from the
same spec, masked alike.

Sources (``source`` of each pair):

- ``summary``: the operation's summary (two words or more);
- ``description``: the first sentence of its description (four words or more, not the summary);
- ``operation_id``: its operationId split into words (two words or more).

Hard negatives (``negative_kind``), a seeded choice of a kind the spec has, then of an endpoint of
that kind: ``family`` (a parent or child path:
``/locations`` against ``/locations/custom-attribute-definitions``), ``other_verb`` (the same
path or its item path with another method), ``same_verb`` (the same method on another path).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from apiatlas.evals.encoder.heldout import HeldOut, held_out_as
from apiatlas.graph.words import split_words
from apiatlas.loaders.cards import card_text
from apiatlas.loaders.models import ApiSpec, Endpoint
from apiatlas.loaders.openapi import load_openapi

if TYPE_CHECKING:
    from apiatlas.evals.encoder.corpus import SpecChoice

_SENTENCE = re.compile(r"(?<=[.!?])\s")
_PARAM = re.compile(r"/\{[^}]*\}$")
QUERY_CHARS = 240


def mine_spec(choice: SpecChoice, rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """The pairs of one corpus spec, and how many of its operations they come from."""
    spec = load_openapi(choice.file, api="corpus")[0]
    endpoints = [e for e in spec.endpoints
                 if not e.webhook and (e.method, e.path) in choice.keep]
    pairs = mine_endpoints(spec, endpoints, rng)
    for pair in pairs:
        pair["spec"] = choice.spec_id
        pair["provider"] = choice.provider
    return pairs, len(endpoints)


def mine_endpoints(spec: ApiSpec, endpoints: list[Endpoint],
                   rng: random.Random) -> list[dict[str, Any]]:
    """Pairs for ``endpoints`` of ``spec`` (see the module docstring). A query text that two
    endpoints of the spec share is dropped: it names neither."""
    queries = [(e, source, text) for e in endpoints for source, text in query_fields(e)]
    counts: dict[str, int] = {}
    for _, _, text in queries:
        counts[text.lower()] = counts.get(text.lower(), 0) + 1
    pairs = []
    for endpoint, source, text in queries:
        if counts[text.lower()] > 1:
            continue
        kind, negative = hard_negative(endpoint, endpoints, rng)
        pairs.append({
            "endpoint": f"{endpoint.method} {endpoint.path}",
            "source": source,
            "query": text,
            "positive": card_text(spec, masked(endpoint, source)),
            "negative": card_text(spec, masked(negative, source)) if negative else None,
            "negative_endpoint": f"{negative.method} {negative.path}" if negative else None,
            "negative_kind": kind,
        })
    return pairs


def query_fields(endpoint: Endpoint) -> list[tuple[str, str]]:
    """The (source, text) queries an endpoint gives."""
    found = []
    summary = " ".join(endpoint.summary.split())
    if len(summary.split()) >= 2:
        found.append(("summary", summary[:QUERY_CHARS]))
    first = first_sentence(endpoint.description)
    if len(first.split()) >= 4 and first.lower() != summary.lower():
        found.append(("description", first[:QUERY_CHARS]))
    words = split_words(endpoint.operation_id)
    if len(words) >= 2:
        found.append(("operation_id", " ".join(words)))
    return found


def first_sentence(text: str) -> str:
    """The first sentence of ``text``, whitespace collapsed."""
    return _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]


def masked(endpoint: Endpoint, source: str) -> Endpoint:
    """``endpoint`` without the field a query of ``source`` was taken from."""
    if source == "summary":
        return endpoint.model_copy(update={"summary": ""})
    if source == "description":
        rest = _SENTENCE.split(" ".join(endpoint.description.split()), maxsplit=1)
        return endpoint.model_copy(update={"description": rest[1] if len(rest) > 1 else ""})
    return endpoint.model_copy(update={"operation_id": ""})


def hard_negative(endpoint: Endpoint, endpoints: list[Endpoint],
                  rng: random.Random) -> tuple[str | None, Endpoint | None]:
    """A hard negative for ``endpoint`` among ``endpoints`` (its kind and the endpoint)."""
    path = endpoint.path.rstrip("/")
    base = _PARAM.sub("", path)
    family, other_verb, same_verb = [], [], []
    for other in endpoints:
        if other is endpoint or (other.method, other.path) == (endpoint.method, endpoint.path):
            continue
        other_path = other.path.rstrip("/")
        if _PARAM.sub("", other_path) == base or other_path == path:
            if other.method != endpoint.method:
                other_verb.append(other)
        elif other_path.startswith(path + "/") or path.startswith(other_path + "/"):
            family.append(other)
        elif other.method == endpoint.method:
            same_verb.append(other)
    kinds = [(k, f) for k, f in (("family", family), ("other_verb", other_verb),
                                 ("same_verb", same_verb)) if f]
    if not kinds:
        return None, None
    kind, found = rng.choice(kinds)
    return kind, rng.choice(found)


def written_pairs(case_file: Path, api_dir: Path, rng: random.Random,
                  heldout: list[HeldOut]) -> list[dict[str, Any]]:
    """Pairs of one file of written questions (``evals/encoder/questions/``): each answerable
    question against the card of the call that does its task (a multi-step question's last
    call), with a hard negative from the same spec. Unanswerable questions give no pair.

    Raises:
        ValueError: The file's spec is an API of ``evals/heldout.txt``, or a question names an
            endpoint its spec does not have.
    """
    raw = yaml.safe_load(case_file.read_text(encoding="utf-8"))
    spec_id = str(raw["spec"]).removesuffix(".json")
    spec = load_openapi(api_dir / f"{spec_id}.json", api="corpus")[0]
    if (found := held_out_as(_provider(spec_id), spec.title, heldout)) is not None:
        raise ValueError(f"{case_file}: {spec_id} is {found.name} ({found.split}), held out")
    endpoints = [e for e in spec.endpoints if not e.webhook]
    by_key = {e.key: e for e in endpoints}
    pairs = []
    for case in raw["cases"]:
        if not case.get("answerable", True) or not case.get("expected_endpoints"):
            continue
        key = " ".join(str(case["expected_endpoints"][-1]).split())
        endpoint = by_key.get(key)
        if endpoint is None:
            raise ValueError(f"{case_file}: case {case['id']} expects {key}, not in {spec_id}")
        kind, negative = hard_negative(endpoint, endpoints, rng)
        pairs.append({
            "spec": spec_id, "provider": _provider(spec_id), "case": case["id"],
            "endpoint": endpoint.key, "source": "written", "query": case["question"],
            "positive": card_text(spec, endpoint),
            "negative": card_text(spec, negative) if negative else None,
            "negative_endpoint": negative.key if negative else None, "negative_kind": kind,
        })
    return pairs


def _provider(spec_id: str) -> str:
    return spec_id.split("/", 1)[0]
