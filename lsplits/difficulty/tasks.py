"""What ``lsplits difficulty`` trains for a dataset's task: the model class, its inputs, targets and metric.

- Labelled data (SNLI, BoolQ, the demo, generic data built with ``--label-field``): sequence
  classification (``AutoModelForSequenceClassification``) scored by accuracy; a sentence pair when
  the examples have a premise (premise, query) or a passage (query, passage), else the query alone.
- Spider: sequence-to-sequence (``AutoModelForSeq2SeqLM``) from ``"{question} | {db_id}"`` to the
  SQL, scored by exact match of the normalised SQL (:func:`canonical_sql`: lowercased, whitespace
  and trailing ``;`` dropped, re-joined from sqlparse tokens so spacing around ``(``, ``,`` or ``.``
  does not matter). This is the string-level form of the paper's metric: it does not accept the
  reorderings (of conditions, of select columns) that the official Spider evaluation accepts.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from lsplits.errors import ConfigError, DataError

if TYPE_CHECKING:
    from lsplits.building.record import TaskRecord

CLASSIFICATION = "classification"
SEQ2SEQ = "seq2seq"
ACCURACY = "accuracy"
EXACT_MATCH = "exact_match"
SPIDER_FIELDS = ("question", "db_id", "query")


@dataclass(frozen=True)
class TaskKind:
    """How one dataset is learned: ``kind`` (classification / seq2seq), input fields, target field."""

    kind: str
    text_fields: tuple[str, ...]
    target_field: str
    query_field: str

    @property
    def metric(self) -> str:
        return EXACT_MATCH if self.kind == SEQ2SEQ else ACCURACY

    def check_columns(self, columns: Iterable[str], source: str) -> None:
        """Raise DataError naming the first needed field that ``columns`` lack."""
        columns = list(columns)
        for name in (*self.text_fields, self.target_field):
            if name not in columns:
                raise DataError(f"missing field {name!r} (it has: {', '.join(columns)})", source=source, field=name)

    def input_texts(self, frame: pd.DataFrame) -> list[tuple[str, ...]]:
        """One tuple of input texts per example (a pair for sentence-pair classification)."""
        if self.kind == SEQ2SEQ:
            return [(f"{q} | {db}",) for q, db in zip(frame["question"].astype(str), frame["db_id"].astype(str))]
        return list(zip(*(frame[name].astype(str) for name in self.text_fields)))


def task_kind(recorded: TaskRecord, columns: Iterable[str] | None = None, *, source: str = "") -> TaskKind:
    """The task kind of a built dataset from what its ``lsplits.json`` records of its task (and its columns,
    for the pair fields).

    Raises:
        ConfigError: a non-Spider dataset without a label field (nothing to classify).
    """
    task = recorded.name
    query = recorded.query_field or "question"
    if task == "spider":
        return TaskKind(SEQ2SEQ, ("question", "db_id"), "query", query)
    label = recorded.label_field
    if not label:
        raise ConfigError(f"{source}: the dataset has no label field (lsplits.json task.label_field is null); "
                          "`lsplits difficulty` trains a classifier on labelled data (build it with a label field) "
                          "or a seq2seq model on Spider")
    columns = set(columns) if columns is not None else set()
    if task == "boolq" or ("passage" in columns and query != "passage"):
        fields: tuple[str, ...] = (query, "passage")
    elif task == "snli" or ("premise" in columns and query != "premise"):
        fields = ("premise", query)
    else:
        fields = (query,)
    return TaskKind(CLASSIFICATION, fields, str(label), query)


def canonical_sql(sql: str) -> str:
    """The normalised SQL that exact match compares: sqlparse tokens of the normalised query, space-joined.

    >>> canonical_sql("SELECT count(*) FROM singer ;") == canonical_sql("select count ( * ) from  singer")
    True
    """
    from lsplits.splits.sql import normalize_sql, sql_tokens

    try:
        return " ".join(token.value for token in sql_tokens(str(sql)))
    except DataError:  # empty or unparsable (a model's output can be anything): compare the plain form
        return normalize_sql(str(sql))


class LabelSpace:
    """The classes of a label field, in a fixed order (numbers numerically, then text), as class ids."""

    def __init__(self, values: Iterable[Any]) -> None:
        self.names = sorted({label_name(v) for v in values} - {None}, key=_label_order)
        self._index = {name: i for i, name in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)

    def ids(self, frame: pd.DataFrame, field: str, source: str) -> list[int]:
        """Class ids of ``frame[field]``; DataError naming the example of a missing or unknown label."""
        out = []
        for example_id, value in zip(frame["id"], frame[field]):
            name = label_name(value)
            if name is None or name not in self._index:
                problem = "missing label" if name is None else f"unknown label {value!r} (known: {', '.join(self.names)})"
                raise DataError(problem, source=source, example=str(example_id), field=field)
            out.append(self._index[name])
        return out


def label_name(value: Any) -> str | None:
    """A label as text (``1``, ``True``, ``entailment``), None when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _label_order(name: str) -> tuple[int, float, str]:
    try:
        return 0, float(name), name
    except ValueError:
        return 1, 0.0, name


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' load reports (e.g. the newly initialised classifier head) and file bars."""
    from transformers.utils import logging as hf_logging

    from lsplits.lm.scoring import quiet_transformers_bars

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with quiet_transformers_bars():
            yield
    finally:
        hf_logging.set_verbosity(level)


def check_model(name: str, kind: TaskKind) -> None:
    """Fail early, in one line, when ``name`` cannot be loaded or cannot do ``kind``'s task.

    Raises:
        ConfigError: no such folder or Hub model, or a model that is not sequence-to-sequence for Spider.
    """
    from transformers import AutoConfig

    from lsplits.lm.model_files import check_model_files, check_vocabulary, first_line, load_tokenizer

    try:
        check_model_files(name)
    except ConfigError as exc:
        raise ConfigError(f"{{opt:models}} {name}: {exc}") from exc
    try:
        with quiet_transformers():
            config = AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{{opt:models}} {name}: cannot load it: {first_line(exc)}") from exc
    if kind.kind == SEQ2SEQ and not getattr(config, "is_encoder_decoder", False):
        raise ConfigError(f"{{opt:models}} {name}: {config.model_type} is not a sequence-to-sequence model; Spider "
                          "needs one (e.g. t5-small or a local T5/BART folder)")
    try:
        check_vocabulary(name, load_tokenizer(name), getattr(config, "vocab_size", None))
    except ConfigError as exc:
        raise ConfigError(f"{{opt:models}} {name}: {exc}") from exc


def load_model(name: str | Path, kind: TaskKind, num_labels: int):
    """A fresh copy of the model for ``kind`` (classification head of ``num_labels``) and its tokenizer."""
    from transformers import AutoModelForSeq2SeqLM, AutoModelForSequenceClassification

    from lsplits.lm.model_files import load_tokenizer

    name = str(name)
    tokenizer = load_tokenizer(name)  # refuses a folder without tokenizer files (an empty tokenizer)
    with quiet_transformers():
        if kind.kind == SEQ2SEQ:
            return AutoModelForSeq2SeqLM.from_pretrained(name), tokenizer
        if tokenizer.pad_token is None:  # GPT-2-style tokenizers: pad with EOS
            tokenizer.pad_token = tokenizer.eos_token
        model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=num_labels)
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


@dataclass
class Encoded:
    """Tokenised examples of one split: model inputs, targets and the gold answer as text."""

    ids: list[str]
    features: list[dict[str, list[int]]]
    targets: list[Any]
    gold: list[str]

    @property
    def lengths(self) -> list[int]:
        return [len(f["input_ids"]) for f in self.features]


def encode(kind: TaskKind, tokenizer, frame: pd.DataFrame, *, labels: LabelSpace | None, max_length: int,
           max_target_length: int, source: str) -> Encoded:
    """Tokenise ``frame`` for ``kind`` (inputs truncated to ``max_length`` tokens, the longest text first)."""
    texts = kind.input_texts(frame)
    columns = list(zip(*texts)) if texts else [[]]
    batch = tokenizer(*[list(c) for c in columns], truncation=True, max_length=max_length)
    names = [key for key in ("input_ids", "attention_mask", "token_type_ids") if key in batch]
    features = [{key: batch[key][i] for key in names} for i in range(len(frame))]
    ids = frame["id"].astype(str).tolist()
    if kind.kind == SEQ2SEQ:
        gold = [canonical_sql(sql) for sql in frame[kind.target_field]]
        targets = tokenizer(text_target=gold, truncation=True, max_length=max_target_length)["input_ids"]
        return Encoded(ids, features, list(targets), gold)
    assert labels is not None
    targets = labels.ids(frame, kind.target_field, source)
    return Encoded(ids, features, targets, [labels.names[t] for t in targets])


def collate(kind: TaskKind, tokenizer, encoded: Encoded, index: Sequence[int], *, with_targets: bool = True):
    """A padded batch (dict of tensors) of the examples at ``index``; targets as ``labels``."""
    import torch

    batch = tokenizer.pad([encoded.features[i] for i in index], return_tensors="pt")
    batch = dict(batch)
    if not with_targets:
        return batch
    if kind.kind == SEQ2SEQ:
        width = max(len(encoded.targets[i]) for i in index)
        batch["labels"] = torch.tensor([list(encoded.targets[i]) + [-100] * (width - len(encoded.targets[i]))
                                        for i in index])
    else:
        batch["labels"] = torch.tensor([encoded.targets[i] for i in index])
    return batch

