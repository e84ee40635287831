"""Dataset builders: one module per published dataset (SNLI, BoolQ, Spider).

Each module defines ``SPEC`` (a :class:`lsplits.build.DatasetSpec`) and ``load(data_files=None)``
returning the pooled, filtered examples; ``lsplits build NAME`` and ``python -m builders.NAME``
run them.
"""
