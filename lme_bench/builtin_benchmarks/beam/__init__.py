"""BEAM (mohammadtavakoli78/BEAM): reading its chats and probing questions, and its scoring.

The format is supported; nothing of BEAM (data, code, prompts) ships with lme-bench. The
LLM-judged part of the scoring lives in beam.judge (it calls a model), the
official prompts are read at run time from a checkout (beam.prompts).
"""
