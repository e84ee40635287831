"""Reliability round 5, items 4 and 5: what leaves the machine, and what a card may make lsplits read.

4. ``lsplits push`` and ``push-space`` send only the files lsplits wrote and listed in its marker: a ``.env``
   holding a token, a note and a symbolic link to a secret, found beside them, stay local (one warning).
5. A card's data file paths are relative, without ``..``, inside the dataset folder and not through a
   symbolic link leaving it; anything else is one line naming the card, the config and the path, before any
   file is read.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest
import yaml
from space_helpers import build_fixture_dataset

from lsplits.building.dataset import BuiltDataset, open_dataset
from lsplits.building.record import BuildRecord
from lsplits.errors import ConfigError, DataError
from lsplits.io.records import DATASET_MARKER

SECRET = b"HF_TOKEN=hf_secret_do_not_upload"


def files_of(folder: Path) -> set[str]:
    """Every regular file below ``folder`` (relative, POSIX), not following links."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def add_strays(folder: Path, outside: Path) -> None:
    """What a user's folder gathers: a ``.env`` with a token, an unlisted note, and links to a secret outside."""
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "private.txt").write_bytes(SECRET)
    (folder / ".env").write_bytes(SECRET)
    (folder / "notes").mkdir()
    (folder / "notes" / "todo.txt").write_text("push it on Monday")
    (folder / "ll_split" / "secret.txt").symlink_to(outside / "private.txt")
    (folder / "linked").symlink_to(outside, target_is_directory=True)


@pytest.fixture
def built(tmp_path) -> tuple[Path, set[str]]:
    """A folder written by lsplits (the build's writer) with strays added after; the files lsplits wrote."""
    folder = build_fixture_dataset(tmp_path / "built")
    written = files_of(folder)
    add_strays(folder, tmp_path / "outside")
    return folder, written


def test_push_sends_only_the_files_lsplits_wrote(built, hub_api, online, caplog):
    import huggingface_hub

    from lsplits.cli.parser import main

    folder, written = built
    online.setattr(huggingface_hub, "get_token", lambda: "hf_good")
    hub_api.valid_tokens = {"hf_good"}
    with caplog.at_level(logging.INFO, logger="lsplits.hub.push"):
        assert main(["push", str(folder), "org/x"]) == 0
    (kind, repo, sent, _), = [call for call in hub_api.calls if call[0] == "create_commit"]
    assert set(sent) == written and DATASET_MARKER in sent and "README.md" in sent
    assert not [name for name, data in sent.items() if SECRET in data]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "left out 4 files" in warnings[0] and ".env" in warnings[0]
    listed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("a push of")]
    assert listed and all(name in listed[0] for name in written)


def test_push_dry_run_prints_what_would_be_sent_and_sends_nothing(built, hub_api, capsys):
    from lsplits.cli.parser import main

    folder, written = built
    assert main(["push", str(folder), "org/x", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"a push of {folder} to org/x would send {len(written)} files:"
    assert {line.strip() for line in out[1:]} == written
    assert hub_api.calls == []


def test_push_of_a_folder_lsplits_did_not_write_is_one_line(tmp_path, hub_api, online, capsys):
    import huggingface_hub

    from lsplits.cli.parser import main

    online.setattr(huggingface_hub, "get_token", lambda: "hf_good")
    hub_api.valid_tokens = {"hf_good"}
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("card")
    (folder / ".env").write_bytes(SECRET)
    assert main(["push", str(folder), "org/x"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"lsplits push: error: {folder}: no file here that lsplits wrote and listed; push a folder written by "
        "`lsplits build` or `lsplits demo` (its lsplits.json lists its files; a staging lists them in "
        ".lsplits-output.json)")
    assert [call[0] for call in hub_api.calls] == ["whoami"]


def test_a_listed_file_replaced_by_a_symbolic_link_is_not_followed(built, hub_api):
    from lsplits.hub.push import push_folder

    folder, written = built
    card = folder / "README.md"
    card.unlink()
    card.symlink_to(folder.parent / "outside" / "private.txt")
    push_folder(folder, "org/x")
    sent = hub_api.calls[-1][2]
    assert set(sent) == written - {"README.md"} and not [data for data in sent.values() if SECRET in data]


def demo_build(folder: Path, outside: Path) -> tuple[Path, set[str]]:
    """A demo build as ``lsplits demo`` leaves it (its scratch LM listed in lsplits.json), then strays added,
    one of them inside the scratch LM; the files lsplits wrote."""
    dataset = build_fixture_dataset(folder)
    (dataset / "scratch-lm").mkdir()
    (dataset / "scratch-lm" / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    (dataset / "scratch-lm" / "tokenizer.json").write_text("{}")
    BuildRecord.of_folder(dataset).adding_files(["scratch-lm/config.json", "scratch-lm/tokenizer.json"]).write(dataset)
    written = files_of(dataset)
    add_strays(dataset, outside)
    (dataset / "scratch-lm" / ".env").write_bytes(SECRET)
    return dataset, written


def small_space(folder: Path, outside: Path) -> Path:
    """A Space source folder with its own ``.env`` and a link to a secret."""
    folder.mkdir()
    (folder / "app.py").write_text("print('demo')\n")
    (folder / "README.md").write_text("---\nsdk: gradio\n---\n# demo\n")
    (folder / ".env").write_bytes(SECRET)
    (folder / "leak.txt").symlink_to(outside / "private.txt")
    return folder


def test_a_staged_and_pushed_space_ships_only_what_lsplits_wrote(tmp_path, hub_api, caplog):
    from lsplits.hub import demo_space as space

    dataset, written = demo_build(tmp_path / "demo", tmp_path / "outside")
    source = small_space(tmp_path / "space-src", tmp_path / "outside")
    with caplog.at_level(logging.WARNING):
        staged = space.stage_space(tmp_path / "staged", space_dir=source, demo_data=dataset)
    files = files_of(staged)
    assert not [p for p in staged.rglob("*") if p.is_symlink()]
    assert {name.removeprefix("data/demo-likelihood/") for name in files if name.startswith("data/")} == \
        {name for name in written if not name.startswith("scratch-lm/")}
    assert {name for name in files if name.startswith("models/")} == {
        "models/scratch-lm/config.json", "models/scratch-lm/tokenizer.json"}
    assert {"app.py", "README.md", "lsplits/hub/push.py"} <= files
    assert not [name for name in files if SECRET in (staged / name).read_bytes()]
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "left out 5 files" in warned and "left out 2 symbolic links or hidden files" in warned

    url = space.push_space("org/demo", space_dir=source, demo_data=dataset, token="hf_test")
    assert url == "https://hub.invalid/spaces/org/demo/commit/1"
    sent = hub_api.calls[-1][2]
    assert set(sent) == files and not [name for name, data in sent.items() if SECRET in data]


def test_cli_push_space_stage_leaves_the_strays_out(tmp_path, capsys):
    from lsplits.cli.parser import main

    dataset, _ = demo_build(tmp_path / "demo", tmp_path / "outside")
    out = tmp_path / "staged"
    assert main(["push-space", "org/demo", "--demo-data", str(dataset), "--stage", str(out)]) == 0
    files = files_of(out)
    assert "data/demo-likelihood/lsplits.json" in files and "models/scratch-lm/config.json" in files
    assert not [name for name in files if ".env" in name or "notes/" in name or "secret" in name]


def test_a_demo_build_whose_scratch_lm_is_not_listed_is_refused_before_staging(tmp_path):
    from lsplits.hub import demo_space as space

    dataset = build_fixture_dataset(tmp_path / "demo")
    (dataset / "scratch-lm").mkdir()
    (dataset / "scratch-lm" / "config.json").write_text("{}")  # put there by hand, not by `lsplits demo`
    with pytest.raises(ConfigError) as refused:
        space.stage_space(tmp_path / "staged", demo_data=dataset)
    assert str(refused.value) == (f"{dataset / 'scratch-lm'}: the demo build does not list its scratch LM as "
                                  "written by lsplits; run `lsplits demo` again, which writes and lists it")
    assert not (tmp_path / "staged").exists()


# --- item 5: the card's data file paths ----------------------------------------------------------------


def with_train_path(folder: Path, path: str) -> None:
    """Rewrite the card so that config ll_split's train split is ``path``."""
    card = folder / "README.md"
    head, meta, rest = card.read_text(encoding="utf-8").split("---", 2)
    data = yaml.safe_load(meta)
    for entry in data["configs"]:
        if entry["config_name"] == "ll_split":
            for item in entry["data_files"]:
                if item["split"] == "train":
                    item["path"] = path
    card.write_text(f"---\n{yaml.safe_dump(data)}---{rest}", encoding="utf-8")


@pytest.fixture
def with_secret(tmp_path) -> tuple[Path, Path]:
    """A built folder whose record lists no data files (as a dataset built elsewhere), so its card's are read,
    and, outside it, a parquet file of 3 private rows."""
    (tmp_path / "data").mkdir()
    folder = build_fixture_dataset(tmp_path / "data" / "built")
    BuildRecord.of_folder(folder).replace(splits={}).write(folder)
    secret = tmp_path / "secret" / "private.parquet"
    secret.parent.mkdir()
    pd.DataFrame({"id": ["s1", "s2", "s3"], "text": ["private"] * 3, "ll_score": [-1.0] * 3, "ll_tokens": [1] * 3,
                  "length": [1] * 3}).to_parquet(secret)
    return folder, secret


UP = "goes up with '..'"
ABSOLUTE = "is absolute"
INSIDE = "a card's data files must lie inside the dataset folder"


@pytest.mark.parametrize("path, problem", [
    ("../../secret/private.parquet", UP),
    ("{secret}", ABSOLUTE),
    ("{secret_dir}/*.parquet", ABSOLUTE),
    ("../../../../**/*.parquet", UP),
    ("ll_split/../../../secret/private.parquet", UP),
])
def test_analyze_refuses_a_card_path_leaving_the_folder_before_reading(with_secret, path, problem, capsys,
                                                                       monkeypatch):
    import lsplits.building.dataset as dataset_module
    from lsplits.cli.parser import main

    folder, secret = with_secret
    path = path.format(secret=secret, secret_dir=secret.parent)
    with_train_path(folder, path)
    monkeypatch.setattr(dataset_module, "read_data_file", lambda p: pytest.fail(f"read {p}"))
    assert main(["analyze", str(folder)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == [f"lsplits analyze: error: {folder / 'README.md'}: config 'll_split', split 'train': the data "
                   f"file path {path!r} {problem}; {INSIDE}"]


@pytest.mark.parametrize("make_link, path", [
    (lambda folder, secret: (folder / "ll_split" / "train-link.parquet").symlink_to(secret),
     "ll_split/train-link.parquet"),
    (lambda folder, secret: (folder / "leak").symlink_to(secret.parent, target_is_directory=True), "*/*.parquet"),
])
def test_a_card_path_through_a_symbolic_link_leaving_the_folder_is_refused(with_secret, make_link, path, capsys,
                                                                           monkeypatch):
    import lsplits.building.dataset as dataset_module
    from lsplits.cli.parser import main

    folder, secret = with_secret
    make_link(folder, secret)
    with_train_path(folder, path)
    monkeypatch.setattr(dataset_module, "read_data_file", lambda p: pytest.fail(f"read {p}"))
    assert main(["analyze", str(folder)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith(
        f"lsplits analyze: error: {folder / 'README.md'}: config 'll_split', split 'train': the data file path "
        f"{path!r} leads out of the dataset folder through a symbolic link (")
    assert err[0].endswith(f"); {INSIDE}")


def test_a_bad_path_in_another_config_is_refused_before_any_file_is_read(with_secret, monkeypatch):
    import lsplits.building.dataset as dataset_module

    folder, secret = with_secret
    with_train_path(folder, str(secret))  # config ll_split
    monkeypatch.setattr(dataset_module, "read_data_file", lambda p: pytest.fail(f"read {p}"))
    with pytest.raises(DataError, match="config 'll_split', split 'train'"):
        open_dataset(folder).load("random")


def test_a_glob_inside_the_folder_and_links_within_it_still_read(with_secret):
    folder, _ = with_secret
    before = open_dataset(folder).load("ll_split")["train"]
    train = next((folder / "ll_split").glob("train-*.parquet"))
    (folder / "ll_split" / "train-alias.parquet").symlink_to(train)  # a link inside the folder is fine
    with_train_path(folder, "ll_split/train-alias.parquet")
    assert open_dataset(folder).load("ll_split")["train"]["id"].tolist() == before["id"].tolist()
    with_train_path(folder, "ll_split/train-0*.parquet")
    assert open_dataset(folder).load("ll_split")["train"]["id"].tolist() == before["id"].tolist()


def test_a_hub_snapshot_whose_files_link_into_its_cache_still_reads(tmp_path):
    """huggingface_hub's snapshot holds links into the repo cache's blobs: those are the Hub's own files."""
    built = build_fixture_dataset(tmp_path / "built")
    repo = tmp_path / "datasets--org--x"
    snapshot = repo / "snapshots" / "abc"
    (repo / "blobs").mkdir(parents=True)
    for name in files_of(built):
        blob = repo / "blobs" / name.replace("/", "_")
        blob.write_bytes((built / name).read_bytes())
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).symlink_to(Path("../" * (name.count("/") + 2)) / "blobs" / blob.name)
    record = BuildRecord.of_folder(snapshot)
    hub = BuiltDataset(location="org/x", folder=None, files=snapshot, record=record, configs=["ll_split", "random"])
    assert hub.load("ll_split")["train"]["id"].tolist() == open_dataset(built).load("ll_split")["train"]["id"].tolist()
    local = BuiltDataset(location=str(snapshot), folder=snapshot, files=snapshot, record=record, configs=["ll_split"])
    with pytest.raises(DataError, match="leads out of the dataset folder through a symbolic link"):
        local.load("ll_split")  # the same links in a local folder: outside it


def test_cli_push_space_stages_without_a_repo_id_and_refuses_an_upload_without_one(tmp_path, capsys):
    """--stage uploads nothing, so it needs no Space id (as push-metrics --stage); an upload without one is one
    line, before any Hub access."""
    from lsplits.cli.parser import main

    out = tmp_path / "staged"
    assert main(["push-space", "--no-assets", "--stage", str(out)]) == 0
    assert (out / "app.py").is_file() and f"staged the Space in {out}" in capsys.readouterr().out
    assert main(["push-space", "--no-assets"]) == 2
    assert "give the Space REPO_ID, or --stage DIR" in capsys.readouterr().err
