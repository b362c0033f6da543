"""Building the knowledge graph from loaded specs and docs, deterministically (no LLM): resources,
operation kinds, dependencies between calls, links from guides to endpoints, and the ingest that
applies them to a store."""
