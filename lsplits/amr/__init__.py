"""AMR graph similarity functions (Smatch, Smatch++, S2Match, SEMA, WLK, SemBLEU).

Each metric module defines one :class:`lsplits.similarity.Similarity` and is registered by name
in :mod:`lsplits.similarity`; get one with ``lsplits.similarity.get("smatchpp")``.
"""
