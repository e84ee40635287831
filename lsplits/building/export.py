"""The Hub layout of a built dataset folder: the one module that writes it and reads it back.

Layout: ``DIR/README.md`` (card with YAML ``configs:``), one parquet file per config and split named
by its content, ``DIR/{config}/{split}-00000-of-00001-{fingerprint}.parquet`` (``fingerprint``: the
first 16 hex digits of the SHA-256 of the file's bytes), ``DIR/lsplits.json`` (the build's record,
:class:`~lsplits.building.record.BuildRecord`: its settings, its data files, and the files lsplits wrote, the
marker of a folder lsplits wrote, see :mod:`lsplits.io.records`) and ``DIR/plots/*.png``.
``datasets`` caches a local folder by its name and the paths of its data files, so content
names make a rebuilt folder load fresh instead of the previous build. Every column has one Arrow
type for the whole dataset, so every config and split loads with identical features. The folder
is written to a temporary sibling and renamed into place (replacing only a folder lsplits wrote),
and ``load_dataset(DIR, config)`` works on it exactly as ``load_dataset("org/name", config)`` does
after a push. :func:`write_hub_folder` hands the card renderer (:mod:`lsplits.building.card`) a
:class:`WrittenFolder` (files and sizes); :func:`data_file_paths` reads the layout back (the data files the
record lists), for :func:`lsplits.building.dataset.open_dataset` (the one opener of a built dataset).
"""

from __future__ import annotations

import copy
import dataclasses
import glob
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from lsplits.building.additions import keep_additions
from lsplits.building.record import BuildRecord
from lsplits.data.labels import encode_labels
from lsplits.data.loading import SOURCE_FIELD
from lsplits.errors import DataError, LsplitsError
from lsplits.io.guard import output_folder
from lsplits.io.records import DATASET_MARKER, folder_files

logger = logging.getLogger(__name__)

SPLIT_NAMES = ("train", "validation", "test")
FINGERPRINT_DIGITS = 16
CARD_FILE = "README.md"
METADATA_FILE = DATASET_MARKER
"""The build's record (``lsplits.json``, :class:`~lsplits.building.record.BuildRecord`)."""
PLOTS_FOLDER = "plots"
DataFiles = dict[str, dict[str, str]]
"""config -> split -> path of its parquet file in the repo."""
Frames = Mapping[str, Mapping[str, pd.DataFrame]]


@dataclass(frozen=True)
class WrittenFolder:
    """What :func:`write_hub_folder` wrote, for the card: data files and row counts per config and split.

    The first config is the default one (``load_dataset(DIR)`` without a config name opens it).
    """

    data_files: DataFiles
    num_rows: dict[str, dict[str, int]]
    features: list[dict] = dataclasses.field(default_factory=list)
    """The ``datasets`` features of every config, as the card's YAML ``dataset_info.features`` lists them."""

    @property
    def default(self) -> str | None:
        """The default config: the first one written."""
        return next(iter(self.data_files), None)

    def configs_yaml(self) -> list[dict]:
        """The card's YAML ``configs:`` entries (see :func:`data_files_yaml`)."""
        return data_files_yaml(self.data_files, self.default)

    def dataset_info_yaml(self) -> list[dict]:
        """The card's YAML ``dataset_info:``: per config the features, those of its parquet files (split sizes
        are in the card's table: the Hub's ``splits`` entries would also need the Arrow byte counts)."""
        return [{"config_name": name, "features": copy.deepcopy(self.features)}  # no YAML anchors: one list each
                for name in self.data_files]


def plot_path(stem: str) -> str:
    """The path in the repo of the plot ``stem`` (``plots/{stem}.png``)."""
    return f"{PLOTS_FOLDER}/{stem}.png"


def data_file_name(split: str, fingerprint: str) -> str:
    """The content-named file of one split: ``{split}-00000-of-00001-{fingerprint}.parquet``."""
    return f"{split}-00000-of-00001-{fingerprint}.parquet"


def data_files_yaml(data_files: Mapping[str, Mapping[str, str]], default: str | None) -> list[dict]:
    """The ``configs:`` entries of the card's YAML for these data files (paths relative to the repo root)."""
    entries = []
    for name, splits in data_files.items():
        entry: dict = {"config_name": name}
        if name == default:
            entry["default"] = True
        entry["data_files"] = [{"split": split, "path": path} for split, path in splits.items()]
        entries.append(entry)
    return entries


def _missing(value: Any) -> bool:
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def _json_default(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else str(value)


def as_text(values: pd.Series) -> list[str | None]:
    """Values as text: strings as they are, missing values as null, everything else as JSON."""
    return [None if _missing(v) else v if isinstance(v, str)
            else json.dumps(v, sort_keys=True, default=_json_default) for v in values]


def _arrow_type(values: pd.Series) -> pa.DataType | None:
    """The one Arrow type of these values, or None when they have none (mixed types)."""
    try:
        return pa.array(values, from_pandas=True).type
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None


def _unify(frame: pd.DataFrame, source: str) -> tuple[pd.DataFrame, dict[str, pa.DataType], frozenset[str]]:
    """``frame`` with its mixed-type columns as text (warning about each), every column's Arrow type,
    and the names of the columns turned into text."""
    types = {name: _arrow_type(frame[name]) for name in frame.columns}
    mixed = frozenset(name for name, kind in types.items() if kind is None)
    if not mixed:
        return frame, types, mixed
    frame = frame.copy()
    for name in sorted(mixed, key=list(frame.columns).index):
        types[name] = pa.string()
        kinds = sorted({type(v).__name__ for v in frame[name] if not _missing(v)})
        what = ", ".join(kinds) if len(kinds) > 1 else f"{''.join(kinds)} values of differing structure"
        logger.warning("field %r has values of mixed types (%s) in %s; storing the whole column as text "
                       "(strings as they are, other values as JSON)", name, what, source)
        frame[name] = pd.Series(as_text(frame[name]), index=frame.index, dtype=object)
    return frame, types, mixed


def unify_types(frame: pd.DataFrame, source: str = "the dataset") -> pd.DataFrame:
    """``frame`` with every column Arrow cannot give one type turned into text (see :func:`as_text`).

    An int in most rows and "n/a" in some, or a list among strings: typed split by split, each
    split would get its own type and the splits would not load together. Warns, naming each field.
    """
    return _unify(frame, source)[0]


ADDED_TYPES = {SOURCE_FIELD: pa.string(), "ll_score": pa.float64(), "ll_tokens": pa.int32(), "length": pa.int32()}
"""The types of the columns lsplits adds beside ``id`` (text): ``source_split`` (the split or file an example
came from), ``ll_score`` (summed log-probability), ``ll_tokens`` (query tokens scored) and ``length`` (words)."""


def _added_type(name: str, inferred: pa.DataType) -> pa.DataType:
    """The type of an added column (:data:`ADDED_TYPES`), or ``inferred`` for any other column or other values."""
    wanted = ADDED_TYPES.get(name)
    if wanted is None or pa.types.is_null(inferred):
        return wanted or inferred
    same_kind = (pa.types.is_integer(wanted) and pa.types.is_integer(inferred)) or (
        pa.types.is_floating(wanted) and (pa.types.is_floating(inferred) or pa.types.is_integer(inferred))) or (
        pa.types.is_string(wanted) and (pa.types.is_string(inferred) or pa.types.is_large_string(inferred)))
    return wanted if same_kind else inferred


def dataset_schema(configs: Frames, class_labels: Mapping[str, Sequence[str]] | None = None,
                   features: Mapping[str, Any] | None = None) -> tuple[pa.Schema, frozenset[str]]:
    """One Arrow schema for every config and split, decided on all examples together, and the text columns.

    The text columns are those :func:`unify_types` turns into text (it warns about each). ``class_labels``
    (column -> names, :mod:`lsplits.data.labels`) become int64 class ids, declared as ``datasets.ClassLabel``
    in the schema's ``huggingface`` metadata, which ``load_dataset`` reads. ``features`` (the input's
    ``datasets`` features) are kept as they are for the other columns (``id`` stays text); the added columns
    get :data:`ADDED_TYPES`.
    """
    frames = [frame for splits in configs.values() for frame in splits.values()]
    every = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if "id" in every.columns:
        every = every.drop_duplicates("id")
    class_labels = {name: names for name, names in (class_labels or {}).items() if name in every.columns}
    kept = {name: feature for name, feature in (features or {}).items()
            if name in every.columns and name != "id" and name not in class_labels}
    _, types, mixed = _unify(every.drop(columns=[*class_labels, *kept]), "the dataset")
    types.update((name, pa.int64()) for name in class_labels)
    types = {name: pa.string() if kind == pa.large_string() else kind for name, kind in types.items()}  # Value("string")
    types = {name: _added_type(str(name), kind) for name, kind in types.items()}
    if kept:
        from datasets import Features

        types.update((field.name, field.type) for field in Features(kept).arrow_schema)
    schema = pa.schema([pa.field(str(name), types[name]) for name in every.columns])
    return with_features(schema, class_labels, kept), mixed - set(class_labels)


def with_features(schema: pa.Schema, class_labels: Mapping[str, Sequence[str]],
                  kept: Mapping[str, Any] | None = None) -> pa.Schema:
    """``schema`` with its ``datasets`` features in the metadata, ``class_labels`` columns as ClassLabel and
    the ``kept`` features (column -> the input's feature) as they are."""
    from datasets import ClassLabel, Features

    features = Features.from_arrow_schema(schema)
    for name, names in class_labels.items():
        features[name] = ClassLabel(names=list(names))
    features.update(kept or {})
    return features.arrow_schema


def schema_features_yaml(schema: pa.Schema) -> list[dict]:
    """The features of a parquet schema as a card's YAML ``dataset_info.features`` list."""
    from datasets import Features

    return Features.from_arrow_schema(schema)._to_yaml_list()


def _class_label_columns(schema: pa.Schema) -> dict[str, list[str]]:
    """column -> names of the ClassLabel columns a written parquet schema declares."""
    from datasets import ClassLabel, Features

    if not schema.metadata or b"huggingface" not in schema.metadata:
        return {}
    features = Features.from_arrow_schema(schema)
    return {name: list(kind.names) for name, kind in features.items() if isinstance(kind, ClassLabel)}


def to_arrow(frame: pd.DataFrame, schema: pa.Schema | None = None, text_columns: frozenset[str] = frozenset()
             ) -> pa.Table:
    """Convert a frame to Arrow with ``schema`` (default: the schema of this frame alone, see
    :func:`dataset_schema`); ``text_columns`` are stored as text (see :func:`as_text`)."""
    if schema is None:
        schema, text_columns = dataset_schema({"": {"": frame}})
    class_names = _class_label_columns(schema)
    columns = {}
    for field in schema:
        values = frame[field.name] if field.name in frame.columns else pd.Series([None] * len(frame), dtype=object)
        if field.name in text_columns:
            values = as_text(values)
        elif field.name in class_names:
            values = encode_labels(values, class_names[field.name])
        columns[field.name] = pa.array(values, type=field.type, from_pandas=True)
    return pa.table(columns, schema=schema)


def _fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:FINGERPRINT_DIGITS]


def _old_data_files(folder: Path) -> dict[str, dict[str, list[str]]]:
    """The data files an existing built folder lists (:func:`listed_data_files`; {} when it lists none)."""
    try:
        record = BuildRecord.of_folder(folder)
    except LsplitsError:  # no readable record: the card may still list them
        record = None
    try:
        return listed_data_files(folder, record)[1]
    except (OSError, UnicodeDecodeError):
        return {}


def write_hub_folder(out: str | Path, configs: Frames, card: str | Callable[[WrittenFolder], str],
                     extra_files: Mapping[str, Path] | None = None, *, record: BuildRecord | None = None,
                     examples: pd.DataFrame | None = None, option: str = "{opt:out}",
                     class_labels: Mapping[str, Sequence[str]] | None = None,
                     features: Mapping[str, Any] | None = None) -> Path:
    """Write every config's splits as content-named parquet plus ``README.md``, ``lsplits.json`` and extra files, atomically.

    ``configs`` maps config name -> split name -> DataFrame (read one config at a time, so a lazy
    mapping keeps one config in memory); ``card`` is the README text, or a function of the
    :class:`WrittenFolder` that returns it; ``extra_files`` maps a path in the repo (e.g.
    ``plots/ll_split.png``) to a local file to copy in; ``record`` is written as ``lsplits.json`` with the data
    files and every file written (an empty :class:`~lsplits.building.record.BuildRecord` when None);
    ``examples`` (every example once, with every column) decides the column types, instead of all
    the configs' frames together; ``class_labels`` (column -> names) are written as ClassLabel ids; ``features``
    (the input's ``datasets`` features) keep their columns' types (:func:`dataset_schema`). ``out``
    is replaced only if lsplits wrote it (:func:`lsplits.io.guard.check_output`); a rebuild keeps the Difficulty
    results it holds when their splits are unchanged (:func:`lsplits.building.additions.keep_additions`).
    """
    out = Path(out)
    schema, text_columns = dataset_schema({"": {"": examples}} if examples is not None else configs, class_labels,
                                          features)
    data_files: DataFiles = {}
    num_rows: dict[str, dict[str, int]] = {}
    with output_folder(out, marker=DATASET_MARKER, option=option, mark=False) as tmp:
        for name, splits in configs.items():
            (tmp / name).mkdir()
            data_files[name], num_rows[name] = {}, {}
            for split, frame in splits.items():
                staged = tmp / name / f".{split}.parquet.tmp"
                pq.write_table(to_arrow(frame.reset_index(drop=True), schema, text_columns), staged)
                path = f"{name}/{data_file_name(split, _fingerprint(staged))}"
                os.replace(staged, tmp / path)
                data_files[name][split] = path
                num_rows[name][split] = len(frame)
        for repo_path, local in (extra_files or {}).items():
            target = tmp / repo_path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(local, target)
        written = WrittenFolder(data_files=data_files, num_rows=num_rows, features=schema_features_yaml(schema))
        (tmp / CARD_FILE).write_text(card(written) if callable(card) else card, encoding="utf-8")
        kept = None
        if (out / METADATA_FILE).is_file():  # a rebuild: keep what `lsplits difficulty` added, if still true
            kept = keep_additions(out, tmp, data_files, old_data_files=_old_data_files(out), card_file=CARD_FILE)
        record = (record or BuildRecord()).replace(splits=data_files, difficulty=kept)
        record.replace(files=tuple(folder_files(tmp, METADATA_FILE))).write(tmp)
    plot_files = sorted(path for path in (extra_files or {}) if path.startswith(f"{PLOTS_FOLDER}/"))
    logger.info("wrote %d configs to %s%s", len(data_files), out,
                f" ({len(plot_files)} plots in {out / PLOTS_FOLDER})" if plot_files else "")
    return out


# --------------------------------------------------------------------------------------------------
# Reading a built folder back
# --------------------------------------------------------------------------------------------------

def card_data_files(card: str) -> dict[str, dict[str, list[str]]]:
    """config -> split -> data file paths (or patterns) listed in a card's YAML ``configs:``; {} without any."""
    parts = card.split("---", 2)
    if not card.startswith("---") or len(parts) < 3:
        return {}
    try:
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError:
        return {}
    entries = meta.get("configs") if isinstance(meta, dict) else None
    found: dict[str, dict[str, list[str]]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "config_name" not in entry:
            continue
        files = entry.get("data_files")
        if isinstance(files, str) or (isinstance(files, list) and all(isinstance(f, str) for f in files)):
            files = {"train": files}
        elif isinstance(files, list):
            files = {str(f.get("split", "train")): f["path"] for f in files if isinstance(f, dict) and "path" in f}
        if not isinstance(files, dict):
            continue
        found[str(entry["config_name"])] = {str(split): [str(p) for p in (paths if isinstance(paths, list) else [paths])]
                                            for split, paths in files.items()}
    return found


def _unsafe_path(path: str) -> str | None:
    """Why a data file path (or pattern) from a card may not be read, or None: it must be relative, without
    ``..``, so that it names a file inside the dataset folder."""
    if not path.strip():
        return "is empty"
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive \
            or path.startswith("~"):
        return "is absolute"
    if ".." in path.replace("\\", "/").split("/"):
        return "goes up with '..'"
    return None


_INSIDE = "a card's data files must lie inside the dataset folder"


def _inside_rule(source: Path) -> str:
    """The rule a refused data file path breaks, naming where it is listed (the card or the record)."""
    return _INSIDE if source.name == CARD_FILE else f"the data files {source.name} lists must lie inside the dataset folder"


def _refused(card: Path, config: str, split: str, pattern: str, problem: str) -> DataError:
    """The one-line error for a data file path of ``card`` (or the record) that lsplits will not read."""
    return DataError(f"config {config!r}, split {split!r}: the data file path {pattern!r} {problem}",
                     source=str(card))


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, its symbolic links followed, lies inside ``root`` (resolved)."""
    return path.resolve().is_relative_to(root)


def listed_data_files(folder: str | Path, record: BuildRecord | None = None
                      ) -> tuple[Path, dict[str, dict[str, list[str]]]]:
    """Where a built folder lists its data files and what it lists (config -> split -> paths or patterns): its
    record (``lsplits.json``, :attr:`~lsplits.building.record.BuildRecord.splits`), or, when the record lists
    none (a dataset another tool wrote, a record written by hand), its card's YAML ``configs:``."""
    folder = Path(folder)
    if record is not None and record.splits:
        return folder / METADATA_FILE, {name: {split: [path] for split, path in splits.items()}
                                        for name, splits in record.splits.items()}
    card = folder / CARD_FILE
    return card, card_data_files(card.read_text(encoding="utf-8")) if card.is_file() else {}


def data_file_paths(folder: str | Path, config: str, *, links_within: str | Path | None = None,
                    record: BuildRecord | None = None) -> dict[str, list[Path]]:
    """split -> parquet files of one config in a built folder, as its ``record`` lists them (else its card's
    YAML ``configs:``, :func:`listed_data_files`).

    Folders that list nothing for the config (hand-made fixtures) are read by name:
    ``{config}/{split}.parquet`` or ``{config}/{split}-*.parquet``.

    A record or a card comes from whoever wrote the folder (a Hub repo, too), so its paths are checked before
    anything is read: each must be relative, without ``..``, and lie inside ``folder`` with its symbolic links
    followed (inside ``links_within`` instead when given: a Hub snapshot's files are links into its cache); a glob
    is expanded inside ``folder`` only.

    Raises:
        DataError: one line naming the record or card, the config, the split and the path that breaks a rule or
            names no file.
    """
    folder = Path(folder)
    root = Path(links_within if links_within is not None else folder).resolve()
    card, every = listed_data_files(folder, record)
    for name, splits in every.items():  # every config's paths, before any file of the folder is read
        for split, patterns in splits.items():
            for pattern in patterns:
                problem = _unsafe_path(pattern)
                if problem:
                    raise _refused(card, name, split, pattern, f"{problem}; {_inside_rule(card)}")
    listed = every.get(config)
    if not listed:
        found = {}
        if _unsafe_path(config) or "/" in config or not _inside(folder / config, root):
            return found  # a config name that is no folder inside this one has no files here
        for split in SPLIT_NAMES:
            exact = folder / config / f"{split}.parquet"
            paths = [exact] if exact.is_file() else sorted((folder / config).glob(f"{split}-*.parquet"))
            paths = [path for path in paths if _inside(path, root)]
            if paths:
                found[split] = paths
        return found

    found = {}
    for split, patterns in listed.items():
        paths: list[Path] = []
        for pattern in patterns:
            matches = sorted(folder.glob(pattern)) if glob.has_magic(pattern) else [folder / pattern]
            outside = [p for p in matches if not _inside(p, root)]
            if outside:
                raise _refused(card, config, split, pattern, "leads out of the dataset folder through a symbolic "
                               f"link ({outside[0].relative_to(folder).as_posix()}); {_inside_rule(card)}")
            missing = [p for p in matches if not p.is_file()]
            if missing or not matches:
                raise _refused(card, config, split, pattern, "names no file in the dataset folder")
            paths += matches
        found[split] = paths
    return found


def read_data_file(path: Path) -> pd.DataFrame:
    """One data file of a built folder; ClassLabel ids come back as their names, the form every reader shows
    and compares."""
    frame = pd.read_parquet(path)
    for name, names in _class_label_columns(pq.read_schema(path)).items():
        frame[name] = [None if pd.isna(v) else names[int(v)] for v in frame[name]]
    return frame
