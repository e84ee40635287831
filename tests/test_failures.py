"""lsplits.runtime.failures: only the exceptions that mean a failed download or load become one-line messages;
a ValueError or TypeError raised by a bug inside the wrapped call propagates as itself (offline, no network)."""

from __future__ import annotations

import pytest

from lsplits.errors import ConfigError, DataError
from lsplits.runtime.failures import hub_failures, hub_snapshot


def _raising(exc: BaseException):
    def call(*args, **kwargs):
        raise exc
    return call


@pytest.mark.parametrize("bug", [ValueError("bad value from a bug"), TypeError("bad type from a bug")])
def test_a_bug_inside_the_snapshot_download_is_not_a_failed_download(monkeypatch, bug):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", _raising(bug))
    with pytest.raises(type(bug), match="from a bug"):
        hub_snapshot("org/name", repo_type="dataset", allow_patterns=None, what="dataset")


def test_a_bug_inside_the_dataset_load_is_not_a_failed_load(monkeypatch, tmp_path):
    import datasets

    from lsplits.data.loading import hub_dataset
    from lsplits.generation.inputs import read_inputs

    monkeypatch.setattr(datasets, "load_dataset", _raising(ValueError("bad value from a bug")))
    with pytest.raises(ValueError, match="from a bug"):
        hub_dataset("org/name")
    (tmp_path / "test.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="from a bug"):
        read_inputs(str(tmp_path))


def test_what_the_hub_raises_for_a_failed_download_is_one_line():
    """HF_HUB_OFFLINE=1 (the suite's setting): an uncached repo is the Hub's LocalEntryNotFoundError, a repo id the
    Hub refuses its HFValidationError (a ValueError subclass, named on purpose)."""
    with pytest.raises(ConfigError, match=r"^cannot download the Hub dataset 'someone/nothing-here': "):
        hub_snapshot("someone/nothing-here", repo_type="dataset", allow_patterns=None, what="dataset")
    with pytest.raises(ConfigError, match=r"^cannot download the Hub model 'a b/c': Repo id must use"):
        hub_snapshot("a b/c", repo_type="model", allow_patterns=None, what="model")


def test_what_datasets_raises_for_a_failed_load_is_one_line(tmp_path):
    from lsplits.data.loading import hub_dataset

    with pytest.raises(DataError, match=r"someone/nothing-here: cannot load the dataset .*Couldn't reach"):
        hub_dataset("someone/nothing-here")  # offline: datasets' own ConnectionError
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"cannot load the dataset .*doesn't contain any data files"):
        hub_dataset(str(tmp_path / "empty"))  # datasets' EmptyDatasetError


def test_the_failures_are_named_types_not_oserror_or_valueerror():
    failures = hub_failures()
    assert OSError not in failures and ValueError not in failures and Exception not in failures
    assert not isinstance(ValueError("x"), failures) and not isinstance(OSError("x"), failures)
    assert not isinstance(KeyError("x"), failures)
