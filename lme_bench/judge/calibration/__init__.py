"""Calibrating a successor judge against a reference judge (the official gpt-4o-2024-08-06):
re-judging the reference's answers, the figures of how far apart they are, and the judge
profile that records them for runs the successor judges."""
