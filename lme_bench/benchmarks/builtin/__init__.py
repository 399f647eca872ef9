"""The built-in benchmarks, each a `Benchmark` (lme_bench.benchmarks.protocol) found by the
registry exactly as an outside one is."""
