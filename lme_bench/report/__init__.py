"""Rendering a run for people: summary.md, report.html with its chart and question cards, the
Prefect UI's markdown, the estimate's tables and `lme-bench compare`'s files.

It sits above the data packages (results, compare, judge, qa, retrieval) and below the run's
machinery: only `lme_bench.run`, the command line, the flows and the tasks import it. Labels in
words and number formats come from `labels.py`, so every page says the same thing the same way.
"""
