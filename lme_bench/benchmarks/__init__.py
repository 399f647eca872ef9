"""Benchmarks beyond LongMemEval: readers of their files into neutral records, and their
official scoring rules (no Prefect, nothing of the run machinery)."""
