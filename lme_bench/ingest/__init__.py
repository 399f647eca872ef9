"""Ingestion: feeding a question's sessions, in date order, into a memory system."""
