"""A built dataset's ``lsplits.json``: one typed record, written and read only through :class:`BuildRecord`.

``lsplits build`` writes it once, complete (:func:`lsplits.building.export.write_hub_folder`); every reader
(``lsplits analyze``, ``lsplits difficulty``, ``build --from-record``, the Space) reads it with
:meth:`BuildRecord.from_file`, and ``lsplits difficulty`` updates it with :meth:`BuildRecord.replace` and
:meth:`BuildRecord.write`. Each value is written once: what the user asked for is :attr:`BuildRecord.settings`
(a :class:`~lsplits.building.settings.BuildSettings`), what the build found or made is beside it (the task's
fields, the configs' data files, the eval size used, each LM run's recipe), and nothing of the one is repeated
in the other. The record also lists the files lsplits wrote into the folder (:data:`lsplits.io.records.MARKER_FILES_KEY`),
which makes it the folder's marker for the output guard.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsplits.building.settings import SETTINGS_KEY, BuildSettings
from lsplits.data.files import read_json_file
from lsplits.errors import ConfigError, DataError
from lsplits.io.atomic import atomic_write_text
from lsplits.io.records import DATASET_MARKER, MARKER_FILES_KEY, RECORD_MARK

logger = logging.getLogger(__name__)

RUN_KEYS_IN_SETTINGS = ("lm", "folds", "seed", "dtype")
"""The keys of a run's plan (:meth:`lsplits.lm.plan.RunPlan.to_dict`) that the settings hold already: a record
keeps them only there (:func:`run_record`)."""


def run_record(plan: Mapping[str, Any]) -> dict[str, Any]:
    """What one LM run adds to the settings, as a record keeps it: its plan without the keys the settings hold
    (:data:`RUN_KEYS_IN_SETTINGS`) and without its own setting (the key it is recorded under)."""
    return {key: value for key, value in plan.items() if key not in (*RUN_KEYS_IN_SETTINGS, "setting")}


@dataclass(frozen=True)
class TaskRecord:
    """What the built dataset is, as the build resolved it (a builder knows fields the settings leave None).

    Attributes:
        name: the builder's task (``snli``, ``spider``) or ``generic``.
        query_field: the field the LM scored.
        label_field: the field eval was balanced by (None: unlabelled).
        categorical_columns: columns the statistics count by value.
    """

    name: str = "generic"
    query_field: str | None = None
    label_field: str | None = None
    categorical_columns: tuple[str, ...] = ()


_JSON_KINDS: dict[str, type | tuple[type, ...]] = {
    "splits": dict, "eval_examples": (int, type(None)), "skipped": dict, "dropped": dict, "read": list, "notes": dict,
    "split_policy": (str, type(None)), "strategies": dict, "constraint_effects": dict, "extra_statistics": dict,
    "class_labels": dict,
    "input": (dict, type(None)), "runs": dict, "training": dict, "dtypes_used": dict, "lm_identity": (dict, type(None)),
    "lsplits_version": (str, type(None)), "demo": (dict, type(None)), "scratch_lm": (dict, type(None)),
    "difficulty": (dict, type(None)), "files": list}
"""The JSON kind of each plain field of :class:`BuildRecord`, checked when a record is read."""
_JSON_KEYS = {"files": MARKER_FILES_KEY}
"""Fields written under another key (the marker's file list has the key :mod:`lsplits.io.records` reads)."""


@dataclass(frozen=True)
class BuildRecord:
    """A built dataset's ``lsplits.json``.

    Attributes:
        settings: what the build was asked for (None in a record written by hand without them).
        task: what the dataset is (:class:`TaskRecord`).
        splits: config -> split -> data file (a path inside the folder), the configs in build order.
        eval_examples: the examples in eval (validation + test) the build used.
        skipped: config -> why it was not built.
        dropped: reason -> examples dropped when loading.
        read: what was read, source by source (:func:`lsplits.data.loading.read_entry`: the file or Hub split,
            its split name, rows read and examples kept).
        notes: facts about the build for the card's method section (the split policy's).
        split_policy: the split policy's name (``plain``, ``spider``).
        strategies: config -> its split strategy's record.
        constraint_effects: config -> what the split policy's constraint did to it
            (:class:`~lsplits.splits.strategy.ConstraintEffect`: swaps, eval choices kept, mean scores).
        extra_statistics: config -> the policy's extra statistics.
        class_labels: column -> ClassLabel names.
        input: the examples split (:func:`lsplits.building.provenance.input_fingerprint`).
        runs: setting -> what its LM run adds to the settings (:func:`run_record`).
        training: setting -> where each fold's training stopped and why, fold by fold
            (:class:`~lsplits.lm.finetune.Stopped` with its ``fold``: steps run of max steps, the best step, whose
            weights scored, and ``"max steps"`` or ``"no improvement for N checks"``).
        dtypes_used: setting -> the dtype its LM run computed in.
        lm_identity: the LM's revision or weights hash.
        lsplits_version: the lsplits that wrote it.
        demo: the settings of the demo data (``lsplits demo`` only).
        scratch_lm: the Space's scratch LM the demo trained (``lsplits demo`` only).
        difficulty: ``lsplits difficulty``'s entry (:mod:`lsplits.building.additions`).
        files: every file lsplits wrote into the folder (the output guard's list).
    """

    settings: BuildSettings | None = None
    task: TaskRecord = field(default_factory=TaskRecord)
    splits: dict[str, dict[str, str]] = field(default_factory=dict)
    eval_examples: int | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    read: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    split_policy: str | None = None
    strategies: dict[str, Any] = field(default_factory=dict)
    constraint_effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_statistics: dict[str, Any] = field(default_factory=dict)
    class_labels: dict[str, list[str]] = field(default_factory=dict)
    input: dict[str, Any] | None = None
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    training: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dtypes_used: dict[str, str] = field(default_factory=dict)
    lm_identity: dict[str, Any] | None = None
    lsplits_version: str | None = None
    demo: dict[str, Any] | None = None
    scratch_lm: dict[str, Any] | None = None
    difficulty: dict[str, Any] | None = None
    files: tuple[str, ...] = ()

    @property
    def configs(self) -> tuple[str, ...]:
        """The configs built, in build order."""
        return tuple(self.splits)

    @property
    def lm(self) -> str | None:
        """The LM that scored the examples (None when the record holds no settings)."""
        return None if self.settings is None else self.settings.lm

    def replace(self, **changes: Any) -> BuildRecord:
        """This record with ``changes`` (field -> value)."""
        return dataclasses.replace(self, **changes)

    def adding_files(self, names: Iterable[str]) -> BuildRecord:
        """This record with ``names`` (paths inside the folder lsplits wrote there since) among its files."""
        return self.replace(files=tuple(sorted({*self.files, *names} - {DATASET_MARKER})))

    def recorded_settings(self) -> dict[str, Any]:
        """Every setting that changes the numbers of the build, as the card's Settings section shows them."""
        values = self.to_dict()
        keys = ("settings", "runs", "dtypes_used", "lm_identity", "lsplits_version", "demo", "scratch_lm")
        return {key: values[key] for key in keys if values.get(key) is not None}

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON values, each under its key (in field order)."""
        values: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "settings":
                value = None if value is None else value.to_dict()
            elif item.name == "task":
                value = dataclasses.asdict(value)
            elif isinstance(value, tuple):
                value = list(value)
            values[_JSON_KEYS.get(item.name, item.name)] = value
        return values

    def to_json(self) -> str:
        """The text of ``lsplits.json``."""
        return json.dumps(self.to_dict(), indent=2, default=str)

    def write(self, folder: str | os.PathLike[str]) -> Path:
        """Write the record as ``folder/lsplits.json`` (atomically); the path."""
        path = Path(folder) / DATASET_MARKER
        atomic_write_text(path, self.to_json())
        return path

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, source: str = DATASET_MARKER) -> BuildRecord:
        """The record in ``values`` (as :meth:`to_dict` writes it).

        Raises:
            DataError: one line naming ``source`` and the key: an unknown key, a value of the wrong kind.
            ConfigError: one line naming ``source`` and the setting that is not valid.
        """
        keys = {_JSON_KEYS.get(f.name, f.name): f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - set(keys))
        if unknown:
            raise DataError(f"unknown key {unknown[0]!r} (a {DATASET_MARKER} holds: {', '.join(keys)})",
                            source=source)
        found: dict[str, Any] = {}
        for key, value in values.items():
            name = keys[key]
            if name == "settings":
                found[name] = None if value is None else _settings(value, source)
            elif name == "task":
                found[name] = _task(value, source)
            else:
                if not isinstance(value, _JSON_KINDS[name]) or isinstance(value, bool):
                    raise DataError(f"{key!r} is {type(value).__name__}, not {_kind_name(_JSON_KINDS[name])}",
                                    source=source)
                found[name] = tuple(map(str, value)) if name == "files" else value
        splits = found.get("splits", {})
        if not all(isinstance(files, dict) and all(isinstance(p, str) for p in files.values())
                   for files in splits.values()):
            raise DataError("'splits' must map each config to {split: data file path}", source=source)
        return cls(**found)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, source: str | None = None) -> BuildRecord:
        """The record in the file ``path`` (a built folder's ``lsplits.json``); errors name ``source`` (default
        the path).

        Raises:
            DataError: no such file, not UTF-8 JSON, not a JSON object, or not a record (:meth:`from_dict`).
            ConfigError: settings that are not valid.
        """
        from lsplits.data.files import read_json_file

        path = Path(path)
        source = source or str(path)
        if not path.is_file():
            raise DataError(f"no {DATASET_MARKER}; is this a folder written by `lsplits build`?", source=source)
        try:
            document = read_json_file(path)
        except OSError as exc:
            raise DataError(f"{DATASET_MARKER} is not readable ({exc.strerror or exc})", source=source) from None
        if not isinstance(document, dict):
            raise DataError(f"{DATASET_MARKER} is not a JSON object", source=source)
        return cls.from_dict(document, source=source if source.endswith(DATASET_MARKER)
                             else f"{source}, {DATASET_MARKER}")

    @classmethod
    def of_folder(cls, folder: str | os.PathLike[str], *, source: str | None = None) -> BuildRecord:
        """The record of the built folder ``folder`` (its ``lsplits.json``)."""
        return cls.from_file(Path(folder) / DATASET_MARKER, source=source or str(folder))


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "a JSON object", list: "a list", str: "a string", int: "a whole number", type(None): "null"}
    return " or ".join(names[k] for k in kinds)


def _settings(value: Any, source: str) -> BuildSettings:
    """The build's settings from a record's ``settings`` entry; one line naming ``source`` when not valid."""
    if not isinstance(value, dict):
        raise DataError("'settings' must be a JSON object", source=source)
    return BuildSettings.from_dict(value, source=source)  # one line naming source and the setting


def _task(value: Any, source: str) -> TaskRecord:
    """The ``task`` entry of a record; one line naming ``source`` and the key when it is not one."""
    known = {f.name for f in dataclasses.fields(TaskRecord)}
    if not isinstance(value, dict) or set(value) - known:
        raise DataError(f"'task' must be a JSON object with keys among {', '.join(sorted(known))}", source=source)
    for key in ("name", "query_field", "label_field"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise DataError(f"'task.{key}' must be a string", source=source)
    columns = value.get("categorical_columns", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise DataError("'task.categorical_columns' must be a list of column names", source=source)
    return TaskRecord(**{**value, "categorical_columns": tuple(columns)})


def settings_of_record(path: str | Path) -> BuildSettings:
    """The settings recorded in ``path``: a built folder's ``lsplits.json`` (its ``settings`` entry) or a
    JSON file of settings alone. Refused in one line when missing, unreadable or not settings."""
    path = Path(path)
    try:
        document = read_json_file(path)
    except FileNotFoundError:
        raise ConfigError(f"{{opt:from_record}} {path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{{opt:from_record}} {path}: not a readable JSON file ({exc})") from None
    except DataError as exc:  # not UTF-8, not JSON, nested too deeply: names the line
        raise ConfigError(f"{{opt:from_record}} {exc}") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{{opt:from_record}} {path}: expected a JSON object of settings")
    writer = document.get(RECORD_MARK)
    if isinstance(writer, str) and writer != "lsplits build":
        raise ConfigError(f"{{opt:from_record}} {path}: the settings record of `{writer}` (written beside its output), "
                          "not of a build; give a built folder's lsplits.json")
    values, recorded = document, None
    if SETTINGS_KEY in document:  # a build's lsplits.json: read whole, through its type
        record = BuildRecord.from_dict(document, source=f"{{opt:from_record}} {path}")
        values, recorded = ({} if record.settings is None else record.settings.to_dict()), record.lsplits_version
    if recorded is not None:
        from lsplits import __version__

        if recorded != __version__:
            logger.warning("%s was written by lsplits %s; this is %s, so scores may differ", path, recorded,
                           __version__)
    return BuildSettings.from_dict(values, source=f"{{opt:from_record}} {path}")
