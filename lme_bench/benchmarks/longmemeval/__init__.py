"""LongMemEval's modules beside its reader (lme_bench.benchmarks.builtin.longmemeval)."""
