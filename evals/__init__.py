"""Evaluation and benchmarks."""
