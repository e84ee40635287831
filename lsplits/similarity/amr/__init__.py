"""AMR graph similarity functions (Smatch, Smatch++, S2Match, SEMA, WLK, SemBLEU).

Each metric module defines one :class:`lsplits.similarity.registry.Similarity` and is registered by name
in :mod:`lsplits.similarity.registry`; get one with ``lsplits.similarity.registry.get("smatchpp")``.
"""
