"""Mycelian's memory vocabulary: entries and context documents, the `Entries` capability a
memory system offers for them (capability.py), and the vaulted EntryMemory protocol that the
in-process store and MCP servers speak behind it (entry_memory.py)."""
