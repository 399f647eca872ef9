"""Answering a question from memory: search strategies and the reader."""
