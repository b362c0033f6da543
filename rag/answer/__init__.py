"""The answer: the deterministic composer, its citations and examples, and the result model."""
