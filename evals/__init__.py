"""Evaluation: datasets, the runner, its metrics and report, training and ablation."""
