"""Question analysis: what a developer's question asks (operation kinds, the things it names,
endpoints and operation ids named outright, versions), and its words corrected against the
project's own vocabulary. Deterministic, no I/O; retrieval and ranking read its result."""
