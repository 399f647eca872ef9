"""Judging hypotheses with LongMemEval's per-type criteria (LLM judge or a labelled fallback)."""
