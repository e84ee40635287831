"""Label columns as Hugging Face ``ClassLabel``: which names a label field has, and its values as class ids.

A written dataset stores a label as the integer id of its name, with the names in the parquet schema and
the card (as the Hub's ``snli`` does: 0 entailment, 1 neutral, 2 contradiction), so the Hub viewer,
``datasets`` features and task models all read them. A task may fix the names (SNLI, the demo); text
labels of other data get their sorted distinct values, recorded in ``lsplits.json``. Booleans (BoolQ's
``answer``) and numbers without names stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lsplits.data.tasks import is_missing
from lsplits.errors import DataError


def class_label_names(values: Iterable[Any], names: Sequence[str] | None = None, *, field: str = "label"
                      ) -> tuple[str, ...] | None:
    """The ClassLabel names of a label column, or None when it stays as it is (booleans, unnamed numbers).

    ``names`` (the task's, in class-id order) win; every text value must be one of them and every integer
    a valid id. Without them, a column of text gets its distinct values in sorted order.

    >>> class_label_names(["b", "a", "b"])
    ('a', 'b')
    >>> class_label_names([True, False]) is None
    True
    >>> class_label_names([0, 2], names=("entailment", "neutral", "contradiction"))
    ('entailment', 'neutral', 'contradiction')
    """
    present = [v for v in values if not is_missing(v)]
    if names is not None:
        names = tuple(names)
        for value in present:
            if not _is_name_or_id(value, names):
                raise DataError(f"label {value!r} is not one of {', '.join(names)} (or their ids 0-{len(names) - 1})",
                                field=field)
        return names
    if present and all(isinstance(v, str) for v in present):
        return tuple(sorted(set(present)))
    return None


def _is_name_or_id(value: Any, names: Sequence[str]) -> bool:
    if isinstance(value, str):
        return value in names
    return not isinstance(value, bool) and float(value).is_integer() and 0 <= int(value) < len(names)


def encode_labels(values: Iterable[Any], names: Sequence[str]) -> list[int | None]:
    """Class ids of ``values`` (names or ids already) for ``names``; missing values stay missing."""
    index = {name: i for i, name in enumerate(names)}
    return [None if is_missing(v) else index[v] if isinstance(v, str) else int(v) for v in values]


def decode_labels(values: Iterable[Any], names: Sequence[str]) -> list[Any]:
    """The names of ``values`` (class ids or names already) for ``names``: what a reader of the written data sees
    (:func:`encode_labels` the other way); missing values stay missing."""
    return [v if is_missing(v) or isinstance(v, str) else names[int(v)] for v in values]


def decode_class_labels(records: list[dict[str, Any]], features: Any) -> list[dict[str, Any]]:
    """``records`` with the ids of ``features``' top-level ``ClassLabel`` columns turned into their names (``-1``,
    the Hub's "no label", into None), so labels read, balance and count as names; the export encodes them back.

    >>> import datasets
    >>> decode_class_labels([{"y": 1}, {"y": -1}], datasets.Features({"y": datasets.ClassLabel(names=["a", "b"])}))
    [{'y': 'b'}, {'y': None}]
    """
    from datasets import ClassLabel

    named = {name: feature.names for name, feature in (features or {}).items() if isinstance(feature, ClassLabel)}
    if not named:
        return records
    return [{key: (None if value is None or value < 0 else named[key][value]) if key in named else value
             for key, value in record.items()} for record in records]
