"""The LLM memory agent: observes a session like a note-taker and writes memory through tools."""
