"""LongMemEval's modules beside its reader (lme_bench.builtin_benchmarks.longmemeval.benchmark)."""
