"""Scoring: retrieval metrics that reproduce the official LongMemEval numbers."""
