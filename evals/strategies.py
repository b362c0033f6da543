"""The strategies an eval compares, each reduced to a ranked list of endpoints for a question.

- ``bm25``, ``dense``, ``hybrid``: the hybrid retriever with one strategy forced. ``dense`` is
  plain LangChain vector RAG over the same endpoint cards and guide chunks: the baseline that
  shows what the knowledge graph and the agent add.
- ``kg``: the knowledge-graph retriever's lookup, primary endpoints then prerequisites.
- ``agent``: the full agent; its answer's endpoints in order, prerequisites included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from time import perf_counter

from langchain_core.documents import Document

from apiatlas.atlas import ApiAtlas
from apiatlas.errors import UsageError
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.answer.result import Citation

STRATEGIES: tuple[str, ...] = ("bm25", "dense", "hybrid", "kg", "agent")
RETRIEVER_K = 20
"""Documents a retriever strategy returns: enough for recall@10 after doc chunks are skipped."""
KG_K = 5
"""Primary endpoints of the ``kg`` strategy: the agent's default, so the two rank alike."""
PLAIN_PRESENTED = 3
"""A plain strategy "presents" its top 3, as a developer skimming a result list would read."""


@dataclass(frozen=True)
class StrategyOutput:
    """What one strategy gave for one question.

    Attributes:
        ranked: ``METHOD /path`` signatures, best first, de-duplicated.
        presented: What the developer is shown: the agent's answer, a plain strategy's top 3.
        citations: The citations shown with what is presented.
        latency_ms: Wall time of the call.
        primary: What is presented as the answer itself (the agent's primary endpoints, not
            the calls to make first or the related ones); ``presented`` when ``None``.
        confidence: The agent's confidence in its first endpoint; ``None`` for a plain
            strategy, which has none.
        outcome: The agent's outcome (``answer``, ``unsure``, ``none``); ``None`` for a plain
            strategy.
    """

    ranked: list[str]
    presented: list[str]
    citations: list[Citation] = field(default_factory=list)
    latency_ms: float = 0.0
    primary: list[str] | None = None
    confidence: float | None = None
    outcome: str | None = None


Strategy = Callable[[str], StrategyOutput]
"""A strategy bound to one atlas and project: question in, output out."""


def parse_strategies(text: str | Iterable[str]) -> tuple[str, ...]:
    """Parse ``bm25,dense,...`` (or a list of names) into known strategy names, in order.

    Raises:
        UsageError: A name is unknown, or no name is given.
    """
    names = text.split(",") if isinstance(text, str) else list(text)
    cleaned = list(dict.fromkeys(n.strip().lower() for n in names if n.strip()))
    unknown = [n for n in cleaned if n not in STRATEGIES]
    if unknown or not cleaned:
        raise UsageError(
            f"unknown strategy {', '.join(map(repr, unknown)) or '(none given)'}: "
            f"choose from {', '.join(STRATEGIES)}"
        )
    return tuple(cleaned)


def make_strategy(name: str, atlas: ApiAtlas, *, project: str) -> Strategy:
    """Bind strategy ``name`` to ``atlas`` and ``project``.

    Raises:
        UsageError: ``name`` is not one of :data:`STRATEGIES`.
    """
    if name in ("bm25", "dense", "hybrid"):
        return _timed(lambda q: _retriever(atlas, q, project=project, strategy=name))
    if name == "kg":
        retriever = KnowledgeGraphRetriever(
            store=atlas.graph, embeddings=atlas.embeddings, project=project, k=KG_K
        )
        return _timed(lambda q: _graph(retriever, q, project=project))
    if name == "agent":
        return _timed(lambda q: _agent(atlas, q, project=project))
    raise UsageError(f"unknown strategy {name!r}: choose from {', '.join(STRATEGIES)}")


def _timed(run: Callable[[str], StrategyOutput]) -> Strategy:
    def timed(question: str) -> StrategyOutput:
        started = perf_counter()
        out = run(question)
        elapsed = (perf_counter() - started) * 1000
        return replace(out, latency_ms=round(elapsed, 3))

    return timed


def dedupe(signatures: Iterable[str]) -> list[str]:
    """Keep the first of signatures that compare equal (method + path, parameter names ignored)."""
    seen: set[str] = set()
    out: list[str] = []
    for signature in signatures:
        key = endpoint_key(signature)
        if key not in seen:
            seen.add(key)
            out.append(signature)
    return out


def document_citation(doc: Document, n: int) -> Citation | None:
    """The citation a retrieved document carries: spec item for cards, guide section for chunks."""
    meta = doc.metadata
    source = str(meta.get("source") or "")
    if not source:
        return None
    if meta.get("kind") == "endpoint":
        pointer = str(meta.get("pointer") or "")
        title = f"{meta.get('method')} {meta.get('path')}"
        return Citation(n=n, kind="spec", source=source, uri=f"{source}#{pointer}",
                        pointer=pointer, title=title)
    anchor = str(meta.get("anchor") or "")
    uri = f"{source}#{anchor}" if anchor else source
    return Citation(n=n, kind="doc", source=source, uri=uri, pointer=anchor,
                    title=str(meta.get("section") or ""))


def _retriever(atlas: ApiAtlas, question: str, *, project: str, strategy: str) -> StrategyOutput:
    docs = atlas.retriever.invoke(question, project=project, k=RETRIEVER_K, strategy=strategy)
    # Doc chunks name no endpoint, so they add nothing to the ranking (but are still cited).
    ranked = dedupe(
        f"{d.metadata['method']} {d.metadata['path']}"
        for d in docs
        if d.metadata.get("kind") == "endpoint"
    )
    citations = [c for i, d in enumerate(docs[:PLAIN_PRESENTED], 1)
                 if (c := document_citation(d, i)) is not None]
    return StrategyOutput(ranked, ranked[:PLAIN_PRESENTED], citations)


def _graph(retriever: KnowledgeGraphRetriever, question: str, *, project: str) -> StrategyOutput:
    lookup = retriever.lookup(question, project=project, k=KG_K)
    refs = list(lookup.primary) + [d.provider for d in lookup.prerequisites]
    ranked = dedupe(ref.signature for ref in refs)
    citations: list[Citation] = []
    shown = {endpoint_key(s) for s in ranked[:PLAIN_PRESENTED]}
    for ref in refs:
        if endpoint_key(ref.signature) in shown and ref.source:
            shown.discard(endpoint_key(ref.signature))
            citations.append(Citation(
                n=len(citations) + 1, kind="spec", source=ref.source,
                uri=f"{ref.source}#{ref.pointer}", pointer=ref.pointer, title=ref.signature,
            ))
    return StrategyOutput(ranked, ranked[:PLAIN_PRESENTED], citations)


def _agent(atlas: ApiAtlas, question: str, *, project: str) -> StrategyOutput:
    result = atlas.ask(question, project=project)
    if result.abstained:
        return StrategyOutput([], [], list(result.citations), confidence=result.confidence,
                              outcome=result.outcome)
    ranked = dedupe(f"{e.method} {e.path}" for e in result.endpoints)
    primary = dedupe(f"{e.method} {e.path}" for e in result.endpoints if e.role == "primary")
    return StrategyOutput(ranked, ranked, list(result.citations), primary=primary,
                          confidence=result.confidence, outcome=result.outcome)
