"""Memory systems: the MemoryBackend protocol and its implementations."""
