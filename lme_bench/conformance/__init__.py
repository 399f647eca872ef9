"""A conformance suite for memory backends, as a library an outside team can run.

In a test module of your own:

    from lme_bench.conformance import MemorySystemConformance, build_system

    class TestMyMemory(MemorySystemConformance):
        def make_system(self, data_dir):
            return build_system(MyMemory, {"some_param": 1}, data_dir)

`pytest` then runs every check on your backend: memories are isolated, a memory reopens by
title from a new backend object, dates are kept, search respects its depth, re-ingesting a
session stores nothing twice, provenance is right where the backend declares it, and delete
works where it declares that.
"""

from lme_bench.conformance.suite import MemorySystemConformance, build_system

__all__ = ["MemorySystemConformance", "build_system"]
