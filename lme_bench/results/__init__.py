"""Run results: Parquet schemas, atomic writes, the manifest and the summary."""
