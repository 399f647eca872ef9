"""Run results as data: row types, Parquet tables and their schemas, atomic writes, the
manifest, reading tables back and the recorded settings. Rendering lives in lme_bench.report."""
