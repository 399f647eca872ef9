"""The benchmarks lme-bench ships: LongMemEval, LoCoMo and BEAM, each whole in its own package
(reader, scoring, judge stage, report and compare sections), reached through the benchmark
registry (lme_bench.benchmarks.registry) and the hooks the run reads, never by name."""
