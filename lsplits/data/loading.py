"""Loading examples from local files (JSONL, JSON, CSV, parquet) or the Hugging Face Hub, with stable ids.

Every loaded example carries ``id``: the dataset's own unique ``id`` field when it has one,
otherwise ``"{source}-{index}"`` where ``source`` is the split name (Hub) or the split/file name
(local files) and ``index`` the 0-based position in that source. Ids therefore point back to where
an example came from and stay the same from run to run.

Two silent mistakes are refused here, before any work (:class:`LoadOptions` says how to proceed):
an example without a label (null, NaN, empty) is an error unless ``missing_labels="drop"``, and a
user field named like one lsplits writes (:data:`LSPLITS_FIELDS`) is an error unless it is renamed.
Every example dropped, and why, is counted in :attr:`LoadedData.dropped` (the card and
``lsplits.json`` report it).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import numbers
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsplits.data.files import DATA_SUFFIXES, one_line, read_records
from lsplits.data.tasks import Task, is_missing
from lsplits.errors import DataError, InvalidOption
from lsplits.params import Checked, Each, Options, Pair, Param, Text
from lsplits.runtime.failures import hub_failures

logger = logging.getLogger(__name__)

ID_FIELD = "id"
SOURCE_FIELD = "source_split"
LSPLITS_FIELDS = ("ll_score", "ll_tokens", "length")
"""Fields lsplits adds to every exported example; a user field of the same name would be overwritten."""
MISSING_LABEL_CHOICES = ("error", "drop")
DEFAULT_MISSING_LABELS = "error"
EMPTY_QUERY = "empty query"
"""The reason recorded in :attr:`LoadedData.dropped` for examples whose query field is null, NaN or blank."""
MISSING_LABEL = "missing label"
"""The reason recorded in :attr:`LoadedData.dropped` for examples dropped by ``missing_labels="drop"``."""


def dropped_label_reason(label: str) -> str:
    """The reason recorded in :attr:`LoadedData.dropped` for examples of a class dropped by ``--drop-label``."""
    return f"label {label!r} dropped (drop_labels)"


@dataclass(frozen=True)
class LoadOptions(Checked):
    """How loading treats examples without a label and user fields that clash with lsplits' own.

    ``missing_labels``: ``"error"`` (default: one line with the count and the first example) or
    ``"drop"`` (drop them, counted). ``rename``: ``(OLD, NEW)`` pairs applied to every record first,
    so a user's ``length`` survives as, say, ``length_orig`` (``--rename length=length_orig``).
    ``drop_labels``: label values (as text) whose examples are dropped, counted (``--drop-label -``): a
    class too small for its eval quota, or a "no gold label" class such as raw SNLI's ``-``. Checked when built
    (:class:`lsplits.params.Checked`).
    """

    RULES = {"missing_labels": Param(Options(MISSING_LABEL_CHOICES)),
             "rename": Param(Each(Pair(Text()), empty=True), why="(OLD, NEW) field names"),
             "drop_labels": Param(Each(Text(empty=True), empty=True), why="labels as text")}

    missing_labels: str = DEFAULT_MISSING_LABELS
    rename: tuple[tuple[str, str], ...] = ()
    drop_labels: tuple[str, ...] = ()

    def check_together(self) -> None:
        """Each rename pair names two different fields, and no field is renamed, or renamed to, twice."""
        olds = [old for old, _ in self.rename]
        news = [new for _, new in self.rename]
        for old, new in self.rename:
            if old == new:
                raise InvalidOption(name="rename", problem="entries must be OLD=NEW with two different names",
                                    value=f"{old}={new}")
        for names in (olds, news):
            twice = next((name for name in names if names.count(name) > 1), None)
            if twice is not None:
                raise InvalidOption(name="rename", problem=f": {twice!r} is named twice")

    @classmethod
    def from_cli(cls, missing_labels: str = DEFAULT_MISSING_LABELS, rename: Sequence[str] | None = None,
                 drop_labels: Sequence[str] | None = None) -> LoadOptions:
        """The options from ``--missing-labels``, ``--rename OLD=NEW ...`` (InvalidOption naming a bad pair) and
        ``--drop-label LABEL ...``."""
        pairs = []
        for item in rename or ():
            old, sep, new = item.partition("=")
            if not sep:
                raise InvalidOption(name="rename", problem="entries must be OLD=NEW (for example length=length_orig)",
                                    value=item)
            pairs.append((old.strip(), new.strip()))
        return cls(missing_labels=missing_labels, rename=tuple(pairs), drop_labels=tuple(drop_labels or ()))


def _renamed(records: list[dict[str, Any]], rename: Sequence[tuple[str, str]], description: str
             ) -> list[dict[str, Any]]:
    """``records`` with the fields renamed; DataError when OLD is not a field or NEW already is one."""
    if not rename or not records:
        return records
    first = records[0]
    for old, new in rename:
        if old not in first:
            raise DataError(f"{{opt:rename}} {old}={new}: there is no field {old!r} (the file has: "
                            f"{', '.join(map(str, first)) or 'no fields'})", source=description, field=old)
        if new in first and new not in dict(rename):
            raise DataError(f"{{opt:rename}} {old}={new}: the data already has a field {new!r}; choose another name",
                            source=description, field=new)
    mapping = dict(rename)
    return [{mapping.get(name, name): value for name, value in record.items()} for record in records]


def check_field_names(columns: Sequence[str], task: Task, description: str) -> None:
    """DataError naming the first user field that lsplits would overwrite (``ll_score``, ``length``, ...)."""
    for name in (*LSPLITS_FIELDS, *task.added_fields):
        if name in columns:
            raise DataError(f"lsplits writes its own {name!r} into every example and would overwrite yours; "
                            f"keep your values with {{opt:rename}} {name}={name}_orig", source=description, field=name)


@dataclass
class LoadedData:
    """Examples pooled from one or more sources, in source order, plus bookkeeping for reports."""

    examples: list[dict[str, Any]]
    columns: list[str]
    source: str
    dropped: dict[str, int]
    features: Any = None
    """The input's ``datasets.Features`` (fields renamed), when it came as a ``Dataset``: every output keeps them."""
    read: list[dict[str, Any]] = field(default_factory=list)
    """What was read, source by source (:func:`read_entry`): the file or Hub split, the split name its examples
    carry, its rows and the examples kept; the card and ``lsplits.json`` state it instead of a fixed claim."""


def read_entry(source: str, split: str, rows: int, kept: int) -> dict[str, Any]:
    """One source as :attr:`LoadedData.read` lists it: ``source`` (the file as given, its name alone when given
    by an absolute path, which would say the machine's folders in a published card; or ``HUB_ID[split]``),
    ``split`` (the name in its examples' ids and ``source_split``), ``rows`` read and ``examples`` kept."""
    shown = Path(source).name if Path(source).is_absolute() else source
    return {"source": shown, "split": split, "rows": rows, "examples": kept}


def read_text(read: Sequence[dict[str, Any]]) -> str:
    """One sentence for the card of what a build read (:attr:`LoadedData.read`), "" when nothing is recorded."""
    if not read:
        return ""
    parts = [f"`{entry['source']}` ({entry['rows']:,} rows as split `{entry['split']}`"
             + (f", {entry['examples']:,} kept" if entry["examples"] != entry["rows"] else "") + ")"
             for entry in read]
    pooled = f" and pooled ({sum(entry['examples'] for entry in read):,} examples)" if len(read) > 1 else ""
    return f"Read {'; '.join(parts)}{pooled}."


def parse_data_files(data_files: Sequence[str]) -> list[tuple[str, Path]]:
    """Turn ``["train=a.jsonl", "b.csv"]`` into ``[("train", a.jsonl), ("b", b.csv)]``."""
    pairs = []
    for item in data_files:
        name, sep, path = item.partition("=")
        if not sep:
            path, name = item, Path(item).stem
        pairs.append((name, Path(path)))
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise DataError(f"two data files share the source name in {list(data_files)}; name them split=path")
    return pairs


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is meant as a local path (``./x``, ``/x``, ``~/x``, ``x.jsonl``), not a Hub id."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or name.lower().endswith(DATA_SUFFIXES)


def load_sources(data: str | None = None, data_files: Sequence[str] | None = None,
                 splits: Sequence[str] | None = None) -> list[tuple[str, list[dict[str, Any]], str]]:
    """Load raw records per source: ``[(source name, records, description for errors)]``.

    ``data`` is a Hub dataset id (all its splits, or ``splits``); ``data_files`` are local files.
    """
    if data_files:
        return [(name, read_records(path), str(path)) for name, path in parse_data_files(data_files)]
    dataset_dict = hub_dataset(data)
    if dataset_dict is None:
        path = Path(str(data)).expanduser()
        return [(path.stem, read_records(path), str(path))]
    return dataset_sources(dataset_dict, str(data), splits)


def hub_dataset(data: str | None) -> Any:
    """The ``datasets.DatasetDict`` of a Hub dataset id or a local dataset folder, or None when ``data`` is a
    local file (read with :func:`read_records`); DataError in one line when there is none."""
    if not data:
        raise DataError("no data given: pass a Hub dataset id or {opt:data_files}")
    if Path(data).expanduser().is_file():
        return None
    if looks_like_path(data) and not Path(data).expanduser().exists():
        raise DataError("no such file or folder", source=data)
    check_no_dataset_script(data)
    import datasets

    try:
        return datasets.load_dataset(data)
    except hub_failures() as exc:  # offline, missing repo, ...: one readable line
        raise DataError(f"cannot load the dataset from the Hub or folder: {one_line(exc)}", source=data) from exc


def check_no_dataset_script(name: str) -> None:
    """DataError naming the folder ``name`` and its script when it holds the loading script that ``datasets``
    refuses to run (``FOLDER/FOLDER.py``: a RuntimeError from ``load_dataset``, and no code is run), before loading."""
    parts = [part for part in name.replace(os.sep, "/").split("/") if part]
    folder = Path(name)
    if not parts or not folder.is_dir():
        return
    script = folder / (parts[-1] if parts[-1].endswith(".py") else parts[-1] + ".py")
    if script.is_file():
        raise DataError(f"holds the dataset script {script.name}, and the datasets library no longer runs dataset "
                        "scripts (none was run); give the data files it loads (JSONL, CSV or parquet) instead",
                        source=name)


def dataset_sources(dataset_dict: Any, data: str, splits: Sequence[str] | None = None
                    ) -> list[tuple[str, list[dict[str, Any]], str]]:
    """The records of each split (``splits``, default all) of a ``DatasetDict`` loaded from ``data``, as sources."""
    names = list(splits) if splits else list(dataset_dict)
    return [(name, dataset_dict[name].to_list(), f"{data}[{name}]") for name in names]


def prepare_examples(sources: list[tuple[str, list[dict[str, Any]], str]], task: Task,
                     options: LoadOptions | None = None, *, features: Any = None) -> LoadedData:
    """Check fields, assign stable ids, apply the task's filters; raises DataError on bad input.

    ``options`` (:class:`LoadOptions`) renames fields first and says what to do with examples without
    a label; a user field that lsplits writes is refused (:func:`check_field_names`). ``features``: the
    ``datasets.Features`` of the records (their ``ClassLabel`` ids already names), kept for the export.
    """
    options = options or LoadOptions()
    drop_labels = set(options.drop_labels)
    if drop_labels and not task.label_field:
        raise InvalidOption(name="drop_labels", problem="needs a label field (give {opt:label_field})",
                            value=sorted(drop_labels)[0])
    intake = _Intake(task, drop_labels)
    columns: list[str] = []
    read: list[dict[str, Any]] = []
    for source_name, records, description in sources:
        kept_before = len(intake.examples)
        if not records:
            read.append(read_entry(description, source_name, 0, 0))
            continue
        records = _renamed(records, options.rename, description)
        first = list(records[0])
        check_field_names(first, task, description)
        task.check_fields(first, description)
        columns.extend(c for c in first if c not in columns)
        use_own_ids = ID_FIELD in first
        for index, record in enumerate(records):
            for name in first:
                if name not in record:
                    raise DataError("missing field", source=description, line=index + 1, field=name)
            example_id = str(record[ID_FIELD]) if use_own_ids else f"{source_name}-{index}"
            intake.take(record, example_id, source_name, description, index + 1)
        read.append(read_entry(description, source_name, len(records), len(intake.examples) - kept_before))
    description = ", ".join(d for _, _, d in sources)
    intake.check_and_report(options.missing_labels, description)
    if ID_FIELD not in columns:
        columns.insert(0, ID_FIELD)
    if SOURCE_FIELD not in columns:
        columns.append(SOURCE_FIELD)
    if features is not None:
        mapping = dict(options.rename)
        features = {mapping.get(name, name): feature for name, feature in features.items()}
    return LoadedData(examples=intake.examples, columns=columns, source=description, dropped=intake.dropped,
                      features=features, read=read)


@dataclass
class _Intake:
    """What :func:`prepare_examples` gathers while it reads the records: the examples kept, the drops and why,
    and what it warns about or refuses once every source is read."""

    task: Task
    drop_labels: set[str]
    examples: list[dict[str, Any]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    seen_ids: dict[str, str] = field(default_factory=dict)
    unlabelled: list[tuple[str, str]] = field(default_factory=list)  # (example id, source) of examples without a label
    labels_seen: set[str] = field(default_factory=set)
    not_text: dict[str, list[tuple[str, object]]] = field(default_factory=dict)  # kind -> (example id, query) of
    # queries that are numbers or booleans, scored as their text
    label_kinds: dict[str, tuple[str, object]] = field(default_factory=dict)  # kind of label value -> (example id,
    # value) of its first example
    first_row: dict[str, Any] | None = None  # every field but the id of the first example kept
    all_same: bool = True  # whether every example kept so far equals it
    total: int = 0

    def _drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def take(self, record: dict[str, Any], example_id: str, source_name: str, description: str, line: int) -> None:
        """Count one record, then keep it as an example or drop it (counted by reason); DataError for a duplicate
        id, labels of two kinds or a query that is not text, a number or a boolean."""
        task = self.task
        if example_id in self.seen_ids:
            raise DataError(f"duplicate id (also in {self.seen_ids[example_id]})", source=description,
                            example=example_id)
        self.seen_ids[example_id] = description
        self.total += 1
        if task.label_field and is_missing(record[task.label_field]):
            self.unlabelled.append((example_id, description))
            return
        if task.label_field:
            _check_label_kind(record[task.label_field], example_id, self.label_kinds, task.label_field, description,
                              line)
        if self.drop_labels:
            label = str(record[task.label_field])
            self.labels_seen.add(label)
            if label in self.drop_labels:
                self._drop(dropped_label_reason(label))
                return
        reason = task.keep(record)
        if reason is None and is_missing(record[task.query_field]):
            reason = EMPTY_QUERY  # every task: a null or blank query would be scored as "None" or nothing
        if reason is not None:
            self._drop(reason)
            return
        query = record[task.query_field]
        if not isinstance(query, str):
            kind = value_kind(query)
            if kind not in ("a number", "a boolean"):
                raise DataError(f"the query is {kind} ({_clipped(query)}), not text: it would "
                                "be scored as its Python repr; join its tokens into one string (or give "
                                "{opt:query_field} the field that holds the text)", source=description,
                                line=line, example=example_id, field=task.query_field)
            self.not_text.setdefault(kind, []).append((example_id, query))
        example = {ID_FIELD: example_id, **{k: v for k, v in record.items() if k != ID_FIELD}}
        example.setdefault(SOURCE_FIELD, source_name)
        self.examples.append(example)
        if self.all_same:  # compared until the first row that differs
            row = {k: v for k, v in record.items() if k != ID_FIELD}
            self.first_row = row if self.first_row is None else self.first_row
            self.all_same = row == self.first_row

    def check_and_report(self, missing_labels: str, description: str) -> None:
        """Once every record is read: refuse missing labels (unless dropped), ``drop_labels`` no example has and
        an empty result; log the drops, rows that are all the same and queries that are not text."""
        task, total = self.task, self.total
        if self.unlabelled:
            if missing_labels == "error":
                first_id, first_source = self.unlabelled[0]
                raise DataError(f"{len(self.unlabelled)} of {total} examples have no label (null, NaN or empty), the "
                                f"first is {first_id!r}; fill them in, or pass {{opt:missing_labels}} drop to drop them",
                                source=first_source, field=task.label_field)
            self.dropped[MISSING_LABEL] = len(self.unlabelled)
        absent = sorted(self.drop_labels - self.labels_seen)
        if absent:
            raise InvalidOption(name="drop_labels", problem=f"must name labels of field {task.label_field!r} "
                                f"({', '.join(sorted(self.labels_seen)[:10])}); no example has that label",
                                value=absent[0])
        if not self.examples:
            raise DataError("the dataset is empty after loading and filtering", source=description or None)
        for reason, count in self.dropped.items():  # an empty query is a fault in the data: said where a notebook
            # shows it
            logger.log(logging.WARNING if reason == EMPTY_QUERY else logging.INFO, "dropped %d of %d examples: %s",
                       count, total, reason)
        if len(self.examples) > 1 and self.all_same:  # every score ties: which go to eval is arbitrary
            logger.warning("all %d examples are the same row (every field but the id is equal): their scores tie, "
                           "so a split of them says nothing about likelihood", len(self.examples))
        for kind, queries in self.not_text.items():
            logger.warning("%d of %d queries (field %r) are %s, not text, and are scored as %s; the first is example "
                           "%r: %r", len(queries), total, task.query_field, _PLURALS[kind],
                           "the words True and False" if kind == "a boolean" else "their digits", *queries[0])


_PLURALS = {"a number": "numbers", "a boolean": "booleans"}


def value_kind(value: object) -> str:
    """What ``value`` is, as a message says it: ``text``, ``a number``, ``a boolean`` (numpy's too) or ``a list``."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    return f"a {type(value).__name__}"


def _check_label_kind(value: object, example_id: str, kinds: dict[str, tuple[str, object]], field: str,
                      source: str, line: int) -> None:
    """Record the kind of label ``value``; DataError naming both examples when labels of two kinds meet (``0`` and
    ``"0"``, ``1`` and ``True``: one class written two ways would count as two)."""
    kind = value_kind(value)
    if kind in kinds:
        return
    if kinds:
        other_kind, (other_id, other_value) = next(iter(kinds.items()))
        raise DataError(f"labels of two kinds: {_clipped(value)} (example {example_id!r}) is {kind} but "
                        f"{_clipped(other_value)} (example {other_id!r}) is {other_kind}; a class written both ways "
                        "would count as two classes, so give every label as text or every label as a number",
                        source=source, line=line, field=field)
    kinds[kind] = (example_id, value)


def _clipped(value: object, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, for a message."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def load_examples(task: Task, data: str | None = None, data_files: Sequence[str] | None = None,
                  splits: Sequence[str] | None = None, options: LoadOptions | None = None) -> LoadedData:
    """Load, check and filter a dataset for ``task`` from the Hub or local files (see :class:`LoadOptions`)."""
    with bulk_loading():
        return prepare_examples(load_sources(data, data_files, splits), task, options)


@contextlib.contextmanager
def bulk_loading() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while records are read: it rescans every dict made so far
    again and again, which made loading grow faster than the data (CPU s of ``builders.snli.load`` at 10k,
    100k, 550k pairs: 0.12, 2.58, 14.2 with it, 0.11, 1.22, 7.28 without). Cycles made meanwhile are
    collected once it runs again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
