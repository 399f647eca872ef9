"""Mycelian's memory vocabulary: vaults, memories, entries, context documents, and the
EntryMemory protocol that in-process stores and MCP servers both speak."""
