"""Provenance of a build: the settings it records (:func:`recorded_settings`) and a fingerprint of the examples it
split (:func:`input_fingerprint`), which ``lsplits build --from-record`` compares with the data it is given
(:func:`warn_if_input_changed`). :class:`~lsplits.building.record.BuildRecord` holds both in ``lsplits.json``."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lsplits.building.record import BuildRecord, run_record
from lsplits.building.settings import SETTINGS_KEY, RunSettings
from lsplits.data.loading import ID_FIELD
from lsplits.data.tasks import Task
from lsplits.errors import LsplitsError

logger = logging.getLogger(__name__)


def recorded_settings(settings: RunSettings, runs: Mapping[str, Any],
                      dtypes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every setting that changes the numbers of a build or a score run, as ``lsplits.json``, the card and the
    scores' parquet metadata record them: the settings object, what each scoring run's plan adds to it
    (:func:`~lsplits.building.record.run_record`: training and scratch-LM recipe), the dtype each run computed in
    (``dtypes``: setting -> ``fp32`` / ``bf16``), the LM's identity (revision or weights hash) and the
    lsplits version."""
    from lsplits import __version__
    from lsplits.lm.model_files import model_identity

    return {SETTINGS_KEY: settings.to_dict(),
            "runs": {kind: run_record(run.to_dict()) for kind, run in runs.items()},
            "dtypes_used": dict(dtypes or {}),
            "lm_identity": model_identity(settings.lm),
            "lsplits_version": __version__}


def read_fields(task: Task) -> list[str]:
    """Every field of an example that a build reads: its id, the query (scored, and its length for length
    control), the label (label balance, the label-conditioned prompts), and the task's other required fields
    (the prompt or context: a template's fields, SNLI's premise, BoolQ's passage; Spider's SQL, whose atoms the
    split constrains). Other fields are only carried into the output."""
    return list(dict.fromkeys(name for name in (ID_FIELD, task.query_field, task.label_field,
                                                *task.required_fields) if name))


def _plain(value: Any) -> Any:
    """A field value as JSON can write it, the same way every time (numpy values as Python ones)."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return str(value)


def input_fingerprint(task: Task, examples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The examples a build split, as ``lsplits.json`` records them: how many, and one hash per field the build
    reads (``fields``, :func:`read_fields`), so ``build --from-record`` can tell that it is given other data, and
    which part of it."""
    import hashlib

    digests = {name: hashlib.sha256() for name in read_fields(task)}
    for example in examples:
        for name, digest in digests.items():
            digest.update(json.dumps(example.get(name), ensure_ascii=False, sort_keys=True,
                                     default=_plain).encode("utf-8") + b"\n")
    return {"examples": len(examples), "fields": {name: digest.hexdigest()[:16] for name, digest in digests.items()}}


def _field_role(task: Task, name: str) -> str:
    """What a read field is to the build, as a warning names it: ``labels (field 'topic')``."""
    if name == ID_FIELD:
        return "ids"
    role = {task.query_field: "queries", task.label_field: "labels"}.get(name, "values")
    return f"{role} (field {name!r})" if role != "values" else f"values of field {name!r}"


def changed_input(task: Task, recorded: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """How the examples ``now`` differ from those ``recorded`` (two :func:`input_fingerprint`), "" when they do
    not: another count, or the parts that changed (each field the build reads)."""
    if recorded.get("examples") != now["examples"]:
        return f"{recorded.get('examples')} examples, this data {now['examples']}"
    fields = recorded.get("fields")
    fields = fields if isinstance(fields, dict) else {}
    changed = [name for name in dict.fromkeys([*fields, *now["fields"]]) if fields.get(name) != now["fields"].get(name)]
    if not changed:
        return ""
    parts = [_field_role(task, name) for name in changed]
    listed = " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)
    return f"{now['examples']} examples, as this data has, but other {listed}"


def warn_if_input_changed(path: str | Path, task: Task, examples: Sequence[Mapping[str, Any]]) -> None:
    """With ``--from-record``: warn loudly, before any work, when the data loaded is not the data the recorded
    build split (another count of examples, or other values in any field the build reads, each named), since
    the rebuild cannot reproduce it."""
    try:
        recorded = BuildRecord.from_file(path).input
    except LsplitsError:
        return  # a file of settings alone (settings_of_record has said what is wrong with any other)
    if recorded is None:
        return  # a file of settings alone records no input
    what = changed_input(task, recorded, input_fingerprint(task, examples))
    if what:
        logger.warning("the record %s is of a build that split other data (it had %s); this build will not "
                       "reproduce it. Give the same data (data files are recorded relative to the folder the "
                       "build ran in) to rebuild it", path, what)
