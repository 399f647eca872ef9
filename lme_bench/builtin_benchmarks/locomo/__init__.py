"""LoCoMo (snap-research/locomo): its two file layouts read into neutral records, the
leak-safe view of a question, scoring as the official `task_eval/evaluation.py` scores, and the
predictions file that script reads.

The data is CC BY-NC 4.0: lme-bench reads a copy the user names and never ships it.
"""
