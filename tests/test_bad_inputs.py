"""Every class of bad input, through the real CLI.

Each case builds its inputs in a fresh folder, runs one command and asserts what a user must see:
exit code 2, exactly one line on stderr that names the file / line / field / option at fault, no
traceback, and no file changed outside the output folder (the user's files survive). The cases are
grouped by the part of lsplits that checks them; the cheap checks run before any model is trained.

Most cases call ``lsplits.cli.parser.main`` in this process (:func:`run_in_process`: the same parser,
checks and error line, without 3-5 s of imports each); the cases with ``process=True`` (one per command,
and those that depend on environment variables read at import) run ``python -m lsplits`` in a fresh
process (:func:`run_cli`) and are marked ``process``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GOLD_AMR = [
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    "(r / run-01 :ARG0 (d / dog))",
    "(s / sleep-01 :ARG0 (c / cat) :manner (q / quiet))",
    "(e / eat-01 :ARG0 (g / girl) :ARG1 (a / apple))",
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write ``rows`` as JSON Lines (UTF-8) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def text_rows(n: int = 40) -> list[dict]:
    """A small valid generic dataset: a text field and a two-class label."""
    words = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]
    return [{"text": " ".join(words[(i * k + k) % len(words)] for k in range(1, 3 + i % 5)),
             "topic": ["a", "b"][i % 2]} for i in range(n)]


def beams_and_gold(folder: Path) -> tuple[Path, Path]:
    """A valid ``lsplits ue`` input pair: beams JSONL (k=3) and gold JSONL, ids ex0..ex3."""
    beams = write_jsonl(folder / "beams.jsonl", [
        {"id": f"ex{i}", "candidates": [g, g, GOLD_AMR[(i + 1) % len(GOLD_AMR)]]} for i, g in enumerate(GOLD_AMR)])
    gold = write_jsonl(folder / "gold.jsonl", [{"id": f"ex{i}", "amr": g} for i, g in enumerate(GOLD_AMR)])
    return beams, gold


def build_argv(data: Path, out: Path, *extra: str) -> list[str]:
    """``lsplits build`` of a generic JSONL file with the scratch LM and a tiny training budget."""
    return ["build", "--data-files", str(data), "--query-field", "text", "--label-field", "topic",
            "--lm", "scratch", "--out", str(out), "--eval-size", "8", "--max-steps", "2",
            "--cache-dir", str(out.parent / "cache"), "--no-progress", *extra]


@dataclass(frozen=True)
class Case:
    """One bad input: ``setup(folder)`` writes the inputs and returns the argv (without ``lsplits``);
    every string of ``expect`` must appear in the single stderr line. ``out`` names the output path
    (relative to the folder) that the command may create; everything else must stay as it was."""

    name: str
    setup: Callable[[Path], list[str]]
    expect: tuple[str, ...]
    out: str = "out"
    process: bool = False
    """Run ``python -m lsplits`` in a fresh process (marked ``process``) rather than ``main`` in this one."""


# --- outputs and exports: folders lsplits did not write, stale loads, column types, split sizes -----------


def user_folder(folder: Path, name: str = "out") -> Path:
    """A folder holding a user's own files (lsplits did not write it)."""
    (folder / name / "mine").mkdir(parents=True)
    (folder / name / "notes.txt").write_text("my notes", encoding="utf-8")
    (folder / name / "mine" / "thesis.tex").write_text("chapter 1", encoding="utf-8")
    return folder / name


def data_file(folder: Path) -> Path:
    return write_jsonl(folder / "data.jsonl", text_rows())


def lsplits_folder_with_a_user_file(folder: Path) -> Path:
    """A dataset folder lsplits wrote, to which the user then added a file."""
    import pandas as pd

    from lsplits.building.export import write_hub_folder

    rows = pd.DataFrame({"id": ["a", "b", "c"], "text": ["x", "y", "z"]})
    out = write_hub_folder(folder / "out", {"c": {"train": rows.iloc[:1], "validation": rows.iloc[1:2],
                                                  "test": rows.iloc[2:]}}, "card")
    (out / "c" / "my-extra-labels.csv").write_text("id,label\na,1\n", encoding="utf-8")
    return out


def score_argv(data: Path, out: Path) -> list[str]:
    """``lsplits score`` of a generic JSONL file with the scratch LM and a tiny training budget."""
    return ["score", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--out", str(out),
            "--max-steps", "2", "--cache-dir", str(out.parent / "cache"), "--no-progress"]


def ue_out_argv(folder: Path, out: Path) -> list[str]:
    beams, gold = beams_and_gold(folder)
    return ["ue", str(beams), "--gold", str(gold), "--out", str(out), "--no-cache", "--no-progress",
            "--similarities", "sema", "--qualities", "sema", "--n-bootstrap", "0"]


def _scratch_parquet(folder: Path) -> Path:
    import pandas as pd

    pd.DataFrame({"id": ["x"], "value": [1.0]}).to_parquet(folder / "results.parquet")
    return folder / "results.parquet"


CASES_OUTPUTS: list[Case] = [
    Case("build_out_is_a_users_folder", lambda d: build_argv(data_file(d), user_folder(d)),
         ("--out", "a non-empty folder that lsplits did not write", "notes.txt"), process=True),
    Case("build_out_is_the_current_folder", lambda d: build_argv(data_file(d), Path(".")),
         ("--out .", "is the current folder")),
    Case("build_out_holds_the_input", lambda d: build_argv(write_jsonl(d / "out" / "data.jsonl", text_rows()),
                                                           d / "out"),
         ("--out", "holds the input file", "data.jsonl"), out="elsewhere"),
    Case("build_out_is_an_existing_file", lambda d: (d.joinpath("out.txt").write_text("mine"),
                                                     build_argv(data_file(d), d / "out.txt"))[1],
         ("--out", "out.txt", "is a file, not a folder"), out="elsewhere"),
    Case("build_out_is_an_lsplits_folder_with_a_user_file",
         lambda d: build_argv(data_file(d), lsplits_folder_with_a_user_file(d)),
         ("--out", "files that lsplits did not write", "c/my-extra-labels.csv"), out="elsewhere"),
    Case("build_out_is_a_symlink", lambda d: (d.joinpath("real").mkdir(), d.joinpath("link").symlink_to(d / "real"),
                                              build_argv(data_file(d), d / "link"))[2],
         ("--out", "link", "symbolic link"), out="elsewhere"),
    Case("score_out_is_a_folder", lambda d: score_argv(data_file(d), user_folder(d)),
         ("--out", "is a folder, not a file"), out="elsewhere", process=True),
    Case("score_out_is_a_users_file", lambda d: score_argv(data_file(d), _scratch_parquet(d)),
         ("--out", "results.parquet", "an existing file that lsplits did not write"), out="elsewhere"),
    Case("score_out_is_the_input", lambda d: score_argv(data_file(d), d / "data.jsonl"),
         ("--out", "data.jsonl", "is the input"), out="elsewhere"),
    Case("demo_out_is_a_users_folder", lambda d: ["demo", "--out", str(user_folder(d)), "--n", "40", "--no-progress"],
         ("--out", "a non-empty folder that lsplits did not write"), out="elsewhere", process=True),
    Case("ue_out_is_a_users_folder", lambda d: ue_out_argv(d, user_folder(d)),
         ("--out", "a non-empty folder that lsplits did not write"), out="elsewhere", process=True),
    Case("ue_out_holds_the_input", lambda d: ue_out_argv(d / "inputs", d / "inputs"),
         ("--out", "holds the input file", "beams.jsonl"), out="elsewhere"),
    Case("eval_size_1_leaves_test_empty", lambda d: build_argv(data_file(d), d / "out", "--eval-size", "1"),
         ("--eval-size 1", "test split empty", "minimum is 2")),
    Case("eval_size_leaves_train_empty", lambda d: build_argv(data_file(d), d / "out", "--eval-size", "40"),
         ("--eval-size 40", "leaves train empty", "between 2 and 39")),
    Case("build_push_while_offline", lambda d: build_argv(data_file(d), d / "out", "--push-to-hub", "org/name"),
         ("--push-to-hub org/name", "HF_HUB_OFFLINE"), process=True),
    Case("push_while_offline", lambda d: ["push", str(lsplits_folder_with_a_user_file(d)), "org/name"],
         ("org/name", "HF_HUB_OFFLINE"), out="elsewhere", process=True),
]


# ----------------------------------------------------------------------------------------------------------
# --- Spider SQL ----------------------------------------------------------------------------------------------


def spider_with_query(query: object, **extra: object) -> Callable[[Path], list[str]]:
    """Setup: a small official-style Spider dev file whose fourth example has ``query`` as its SQL
    (and every example the ``extra`` fields)."""
    def setup(folder: Path) -> list[str]:
        rows = [{"db_id": "concert_singer", "query": "SELECT name FROM singer WHERE age  >  20",
                 "question": f"Which singers are older than {20 + i}?", **extra} for i in range(12)]
        rows[3]["query"] = query
        data = write_jsonl(folder / "dev.jsonl", rows)
        return ["build", "spider", "--data-files", str(data), "--lm", "scratch", "--out", str(folder / "out"),
                "--max-steps", "2", "--cache-dir", str(folder / "cache"), "--no-progress"]
    return setup


CASES_SPIDER: list[Case] = [
    Case("spider-empty-query", spider_with_query("  ; "),
         ("example 'validation-3'", "field 'query'", "the SQL query is empty")),
    Case("spider-null-query", spider_with_query(None),
         ("example 'validation-3'", "field 'query'", "expected the SQL query as text, got null")),
    Case("spider-list-query", spider_with_query(["SELECT", "name"]),
         ("example 'validation-3'", "field 'query'", "expected the SQL query as text, got list")),
]


# ----------------------------------------------------------------------------------------------------------
# --- uncertainty: beams, gold pairing, options of ue and the metric modules -------------------------------


def ue_argv(folder: Path, beams: list[Path], gold: Path, *extra: str) -> list[str]:
    """``lsplits ue`` on the given files, one cheap similarity, report in ``out``, matrix cache in ``cache``."""
    return ["ue", *map(str, beams), "--gold", str(gold), "--out", str(folder / "out"), "--similarities", "smatchpp",
            "--qualities", "smatchpp", "--cache-dir", str(folder / "cache"), "--workers", "1", "--no-progress", *extra]


def ue_with(*extra: str) -> Callable[[Path], list[str]]:
    """Setup: the valid pair of ``beams_and_gold`` with extra options."""
    def setup(folder: Path) -> list[str]:
        beams, gold = beams_and_gold(folder)
        return ue_argv(folder, [beams], gold, *extra)
    return setup


def write_penman(path: Path, graphs: list[tuple[str | None, str]]) -> Path:
    """A PENMAN file of (id or None, graph); a graph with an id gets a ``# ::id`` line."""
    path.write_text("".join((f"# ::id {example}\n" if example else "") + graph + "\n\n" for example, graph in graphs),
                    encoding="utf-8")
    return path


def ue_gold_graph_without_id(folder: Path) -> list[str]:
    beams, _ = beams_and_gold(folder)
    gold = write_penman(folder / "gold.amr", [(None if i == 2 else f"ex{i}", g) for i, g in enumerate(GOLD_AMR)])
    return ue_argv(folder, [beams], gold)


def ue_gold_without_any_id(folder: Path) -> list[str]:
    beams, _ = beams_and_gold(folder)
    return ue_argv(folder, [beams], write_penman(folder / "gold.amr", [(None, g) for g in GOLD_AMR]))


def ue_beam_ranks_mixing_ids(folder: Path) -> list[str]:
    rank1 = write_penman(folder / "beam1.amr", [(f"ex{i}", g) for i, g in enumerate(GOLD_AMR)])
    rank2 = write_penman(folder / "beam2.amr", [(None, g) for g in GOLD_AMR])
    gold = write_penman(folder / "gold.amr", [(f"ex{i}", g) for i, g in enumerate(GOLD_AMR)])
    return ue_argv(folder, [rank1, rank2], gold)


def ue_positional_counts_differ(folder: Path) -> list[str]:
    rank1 = write_penman(folder / "beam1.amr", [(None, g) for g in GOLD_AMR])
    gold = write_penman(folder / "gold.amr", [(None, g) for g in GOLD_AMR[:3]])
    return ue_argv(folder, [rank1], gold)


def ue_missing_beams(folder: Path) -> list[str]:
    _, gold = beams_and_gold(folder)
    return ue_argv(folder, [folder / "missing.jsonl"], gold)


def ue_missing_gold(folder: Path) -> list[str]:
    beams, _ = beams_and_gold(folder)
    return ue_argv(folder, [beams], folder / "missing.amr")


def systems_argv(folder: Path, *systems: str) -> list[str]:
    """``lsplits ue`` with ``--system`` values (FILE placeholders become the valid beams of beams_and_gold)."""
    beams, gold = beams_and_gold(folder)
    values = [item for value in systems for item in ("--system", value.replace("FILE", str(beams)))]
    return ["ue", *values, "--gold", str(gold), "--out", str(folder / "out"), "--no-progress"]


def fewer_examples_argv(folder: Path) -> list[str]:
    """Two systems, the second without ex3."""
    argv = systems_argv(folder, "full=FILE")
    fewer = write_jsonl(folder / "fewer.jsonl", [json.loads(line) for line in
                                                 (folder / "beams.jsonl").read_text().splitlines()[:3]])
    return [*argv[:3], "--system", f"fewer={fewer}", *argv[3:]]


def beams_inputs(folder: Path) -> Path:
    """A valid ``lsplits beams`` input: a text file of three sentences."""
    path = folder / "sentences.txt"
    path.write_text("the boy wants to go\nthe dog runs\nthe cat sleeps\n", encoding="utf-8")
    return path


def bert_folder(folder: Path) -> Path:
    """A tiny BERT encoder saved with save_pretrained: a model that cannot generate candidates."""
    from transformers import BertConfig, BertModel

    BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16)).save_pretrained(folder / "bert")
    return folder / "bert"


def beams_argv(folder: Path, *extra: str, model: str = "no-model", out: str = "out/beams.jsonl") -> list[str]:
    return ["beams", model, str(beams_inputs(folder)), "--out", str(folder / out), "--no-progress",
            "--cache-dir", str(folder / "cache"), *extra]


def ue_option(*options: str) -> Callable[[Path], list[str]]:
    """``lsplits ue`` on valid beams and gold with the given (bad) options."""
    def setup(folder: Path) -> list[str]:
        beams, gold = beams_and_gold(folder)
        return ["ue", str(beams), "--gold", str(gold), "--out", str(folder / "out"), "--no-cache", *options]
    return setup


CASES_UE: list[Case] = [
    Case("ue-gold-graph-without-id", ue_gold_graph_without_id,
         ("gold.amr, line 7, field '# ::id'", "this graph has no id, but gold.amr line 1 has one",
          "paired by id whenever any input has ids")),
    Case("ue-gold-without-any-id", ue_gold_without_any_id,
         ("gold.amr, line 1, field '# ::id'", "no gold graph has an id, but the beams do (beams.jsonl line 1)")),
    Case("ue-beam-ranks-mixing-ids", ue_beam_ranks_mixing_ids,
         ("beam2.amr, line 1, field '# ::id'", "this graph has no id, but beam1.amr line 1 has one")),
    Case("ue-positional-counts-differ", ue_positional_counts_differ,
         ("paired by position", "beam1.amr) hold 4 examples", "gold.amr) holds 3 graphs")),
    Case("ue-missing-beams-file", ue_missing_beams, ("missing.jsonl: beams file not found",)),
    Case("ue-missing-gold-file", ue_missing_gold, ("missing.amr: gold file not found",)),
    Case("ue-ecc-threshold-nan", ue_with("--ecc-threshold", "nan"), ("--ecc-threshold must be a number in (0, 2]", "got nan")),
    Case("ue-ecc-threshold-above-2", ue_with("--ecc-threshold", "3"), ("--ecc-threshold must be a number in (0, 2]", "got 3.0")),
    Case("ue-confidence-1", ue_with("--confidence", "1"), ("--confidence must be a number in (0, 1)", "got 1.0")),
    Case("ue-bootstrap-negative", ue_with("--n-bootstrap", "-5"), ("--n-bootstrap must be a whole number >= 0", "got -5")),
    Case("ue-max-rejection-0", ue_with("--max-rejection", "0"), ("--max-rejection must be a number in (0, 1]", "got 0.0")),
    Case("ue-max-rejection-above-1", ue_with("--max-rejection", "1.5"), ("--max-rejection must be a number in (0, 1]",)),
    Case("ue-seed-negative", ue_with("--seed", "-1"), ("--seed must be a whole number >= 0", "got -1")),
    Case("ue-system-without-name", lambda f: systems_argv(f, "FILE"), ("--system", "expected NAME=BEAMS")),
    Case("ue-system-twice", lambda f: systems_argv(f, "a=FILE", "A=FILE"), ("--system A", "given twice")),
    Case("ue-system-missing-file", lambda f: systems_argv(f, f"a={f / 'none.jsonl'}"),
         ("--system a", "no such file", "none.jsonl")),
    Case("ue-system-reserved-name", lambda f: systems_argv(f, "tables=FILE"), ("--system", "'tables'", "folder name")),
    Case("ue-system-and-positional", lambda f: [*systems_argv(f, "a=FILE"), str(f / "beams.jsonl")],
         ("not both",)),
    Case("ue-systems-different-examples", fewer_examples_argv,
         ("fewer.jsonl", "system fewer lacks 1 example(s) that system full has (ex3)", "same examples")),
    Case("beams: input file missing",
         lambda f: ["beams", "no-model", str(f / "missing.txt"), "--out", str(f / "out" / "beams.jsonl")],
         ("missing.txt", "no such file"), process=True),
    Case("beams: JSONL input without the field",
         lambda f: ["beams", "no-model", str(write_jsonl(f / "in.jsonl", [{"id": "a", "snt": "the dog runs"}])),
                    "--input-field", "text", "--out", str(f / "out" / "beams.jsonl")],
         ("in.jsonl", "line 1", "field 'text'", "missing text field (fields: id, snt)")),
    Case("beams: k below 1", lambda f: beams_argv(f, "--k", "0"), ("--k must be a whole number >= 1 (candidates per input), got 0",)),
    Case("beams: a model that cannot generate", lambda f: beams_argv(f, model=str(bert_folder(f))),
         ("(bert, BertModel) is neither a seq2seq model nor a causal LM",)),
    Case("beams: --out is a folder", lambda f: (f / "out").mkdir() or beams_argv(f, out="out"),
         ("--out", "is a folder",)),
    Case("beams: --out is not JSONL", lambda f: beams_argv(f, out="out/beams.txt"),
         ("beams.txt", "must end in .jsonl")),
    Case("beams: --out is a file lsplits did not write",
         lambda f: (f / "notes.jsonl").write_text("my notes\n") and beams_argv(f, out="notes.jsonl"),
         ("--out", "notes.jsonl: an existing file that lsplits did not write",), out="nothing"),
    Case("ue-unknown-estimator", ue_option("--estimators", "eigv,entropy"),
         ("--estimators item 1 must be one of lexsim, ", "numsemsets", "got 'entropy'")),
    Case("ue-unknown-metric", ue_option("--metrics", "prr,auroc"), ("--metrics item 1 must be one of prr, ", "got 'auroc'")),
    Case("ue-roc-auc-without-bad-below", ue_option("--metrics", "roc_auc"), ("--metrics: roc_auc needs --bad-below",
                                                                            "--bad-below")),
    Case("ue-sets-threshold-out-of-range", ue_option("--estimators", "numsemsets", "--sets-threshold", "1.5"),
         ("--sets-threshold", "(0, 1]", "1.5")),
    Case("ue-kle-t-not-positive", ue_option("--estimators", "kle", "--kle-t", "0"), ("--kle-t must be a number > 0", "got 0.0")),
    Case("ue-unknown-normalizer", ue_option("--metrics", "ece", "--normalizer", "platt"),
         ("--normalizer must be one of minmax, ", "got 'platt'")),
    Case("ue-lexsim-on-a-graph-similarity", ue_option("--lexical-similarities", "smatchpp"),
         ("--lexical-similarities item 0 must be one of rouge1, ", "got 'smatchpp'")),
]


# ----------------------------------------------------------------------------------------------------------
# --- data files, models and training options ----------------------------------------------------------------


def _data_lines(folder: Path, name: str = "data.jsonl", line: int = 3, old: bytes = b"", new: bytes = b"") -> Path:
    """The valid text dataset as JSON Lines with ``old`` replaced by ``new`` on 1-based ``line``."""
    lines = [json.dumps(row).encode() + b"\n" for row in text_rows()]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path = folder / name
    path.write_bytes(b"".join(lines))
    return path


def _bytes_file(name: str, content: bytes) -> Callable[[Path], list[str]]:
    """A case whose data file ``name`` holds ``content``."""
    def setup(folder: Path) -> list[str]:
        (folder / name).write_bytes(content)
        return build_argv(folder / name, folder / "out")
    return setup


def _build_with(*extra: str, rows: Callable[[], list[dict]] = text_rows) -> Callable[[Path], list[str]]:
    """A case building the valid dataset (or ``rows()``) with ``extra`` options."""
    def setup(folder: Path) -> list[str]:
        return build_argv(write_jsonl(folder / "data.jsonl", rows()), folder / "out", *extra)
    return setup


def _score_with(*extra: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        data = write_jsonl(folder / "data.jsonl", text_rows())
        return ["score", "--data-files", str(data), "--query-field", "text", "--out", str(folder / "out"),
                "--cache-dir", str(folder / "cache"), "--no-progress", *extra]
    return setup


def _with_model(make: Callable[[Path, Path], Path], rows: Callable[[], list[dict]] = text_rows
                ) -> Callable[[Path], list[str]]:
    """A case building with ``--lm`` a broken copy ``make(tiny model folder, destination)`` of a tiny GPT-2."""
    def setup(folder: Path) -> list[str]:
        from lm_fixtures import tiny_model_folder

        broken = make(tiny_model_folder(folder / "tiny"), folder / "broken-lm")
        data = write_jsonl(folder / "data.jsonl", rows())
        argv = build_argv(data, folder / "out")
        argv[argv.index("--lm") + 1] = str(broken)
        return argv
    return setup


def _with_missing_labels(missing: object) -> list[dict]:
    """The text rows with ``missing`` as the label of rows 5, 11 and 17."""
    rows = text_rows()
    for i in (5, 11, 17):
        rows[i]["topic"] = missing
    return rows


def _one_class_short() -> list[dict]:
    """40 rows, 39 of topic 'a' and 1 of topic 'b': an eval of 8 needs 4 of each."""
    return [{**row, "topic": "b" if i == 0 else "a"} for i, row in enumerate(text_rows())]


def _lone_accent_query() -> list[dict]:
    rows = text_rows()
    rows[5]["text"] = "\u0301"
    return rows


def _copy_without_tokenizer(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_without_tokenizer

    return copy_without_tokenizer(model, dest)


def _copy_with_truncated_weights(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_with_truncated_weights

    return copy_with_truncated_weights(model, dest)


def _copy_with_accent_stripping_tokenizer(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_with_accent_stripping_tokenizer

    return copy_with_accent_stripping_tokenizer(model, dest)


def _relative_lm(name: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        argv = build_argv(write_jsonl(folder / "data.jsonl", text_rows()), folder / "out")
        argv[argv.index("--lm") + 1] = name
        return argv
    return setup


def _missing_positional_data(folder: Path) -> list[str]:
    argv = build_argv(folder / "unused.jsonl", folder / "out")
    return ["build", "./data/train.jsonl", *argv[3:]]


def _folder_as_data_file(folder: Path) -> list[str]:
    (folder / "data.jsonl").mkdir()
    return build_argv(folder / "data.jsonl", folder / "out")


def _truncated_parquet(folder: Path) -> list[str]:
    import pandas as pd

    path = folder / "data.parquet"
    pd.DataFrame(text_rows()).to_parquet(path)
    path.write_bytes(path.read_bytes()[:-40])
    return build_argv(path, folder / "out")


_GOOD_LINES = "".join(json.dumps(row) + "\n" for row in text_rows()).encode()

def difficulty_folder(folder: Path, *, task: str = "generic", label_field: str | None = "topic",
                      missing_label: bool = False) -> Path:
    """A tiny dataset in Hub layout (configs random, ll_split) with an ``lsplits.json``, written by hand."""
    import pandas as pd

    rows = [{"id": f"ex{i}", **row, "length": len(row["text"].split())} for i, row in enumerate(text_rows(24))]
    if missing_label:
        rows[-1]["topic"] = None
    entries = []
    for config in ("random", "ll_split"):
        ordered = rows if config == "random" else rows[::-1]
        parts = {"train": ordered[:16], "validation": ordered[16:20], "test": ordered[20:]}
        for split, part in parts.items():
            (folder / config).mkdir(parents=True, exist_ok=True)
            pd.DataFrame(part).to_parquet(folder / config / f"{split}.parquet")
        entries.append(f"- config_name: {config}\n  data_files:\n"
                       + "".join(f"  - split: {split}\n    path: {config}/{split}.parquet\n" for split in parts))
    (folder / "README.md").write_text("---\nconfigs:\n" + "".join(entries) + "---\n# tiny\n", encoding="utf-8")
    meta = {"task": {"name": task, "query_field": "text", "label_field": label_field}, "settings": {"lm": "scratch"}}
    (folder / "lsplits.json").write_text(json.dumps(meta), encoding="utf-8")
    from lsplits.io.records import mark_folder

    mark_folder(folder, "lsplits.json")  # lists the files, as a build does
    return folder


def difficulty_argv(folder: Path, *extra: str) -> list[str]:
    return ["difficulty", str(folder), "--out", str(folder.parent / "out"), "--no-progress", *extra]


CASES_DIFFICULTY: list[Case] = [
    Case("difficulty: folder without lsplits.json",
         lambda d: ((d / "data").mkdir(), difficulty_argv(d / "data"))[1], ("data", "no lsplits.json"),
         process=True),
    Case("difficulty: unknown config", lambda d: difficulty_argv(difficulty_folder(d / "data"), "--configs", "nope"),
         ("--configs", "'nope'", "random, ll_split")),
    Case("difficulty: dataset without labels",
         lambda d: difficulty_argv(difficulty_folder(d / "data", label_field=None)), ("no label field", "lsplits.json")),
    Case("difficulty: Spider with the default encoder",
         lambda d: difficulty_argv(difficulty_folder(d / "data", task="spider")),
         ("Spider", "sequence-to-sequence", "--model")),
    Case("difficulty: model folder missing",
         lambda d: difficulty_argv(difficulty_folder(d / "data"), "--model", str(d / "no-model")),
         ("--model", "no-model", "no such folder")),
    Case("difficulty: example without a label",
         lambda d: difficulty_argv(difficulty_folder(d / "data", missing_label=True)),
         ("config 'random'", "example 'ex23'", "field 'topic'", "missing label")),
    Case("difficulty: --epochs 0", lambda d: difficulty_argv(difficulty_folder(d / "data"), "--epochs", "0"),
         ("error: --epochs must be a number > 0, got 0.0",)),
    Case("difficulty: --out holds files lsplits did not write",
         lambda d: ((d / "out").mkdir(), (d / "out" / "notes.txt").write_text("mine"),
                    difficulty_argv(difficulty_folder(d / "data")))[2], ("--out", "did not write")),
]


CASES_DATA: list[Case] = [
    *CASES_DIFFICULTY,
    Case("non_utf8_jsonl", lambda f: build_argv(_data_lines(f, old=b'"text": "', new=b'"text": "\xff'), f / "out"),
         ("data.jsonl", "line 3", "byte 0xff at byte offset", "not UTF-8")),
    Case("non_utf8_csv", _bytes_file("data.csv", b"text,topic\nred cat,a\nbl\xe9 dog,b\n"),
         ("data.csv", "line 3", "byte 0xe9 at byte offset 23", "not UTF-8")),
    Case("non_utf8_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"},\n {"text": "\xc3(", "topic": "b"}]'),
         ("data.json", "line 2", "byte 0xc3 at byte offset", "not UTF-8")),
    Case("lone_surrogate_jsonl",
         lambda f: build_argv(_data_lines(f, line=4, old=b'"text": "', new=b'"text": "\\ud800'), f / "out"),
         ("data.jsonl", "line 4", "field 'text'", "lone surrogate \\ud800")),
    Case("lone_surrogate_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"}, {"text": "\\udc80", "topic": "b"}]'),
         ("data.json", "record 2", "field 'text'", "lone surrogate \\udc80")),
    Case("jsonl_named_parquet", _bytes_file("data.parquet", _GOOD_LINES),
         ("data.parquet", "not a parquet file", "another format")),
    Case("truncated_parquet", _truncated_parquet, ("data.parquet", "not a parquet file", "truncated")),
    Case("truncated_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"},\n {"text": "blu'),
         ("data.json", "line 2", "invalid JSON", "truncated")),
    Case("truncated_jsonl", _bytes_file("data.jsonl", _GOOD_LINES[:-9]),
         ("data.jsonl", "line 40", "invalid JSON", "truncated")),
    Case("csv_open_quote", _bytes_file("data.csv", b'text,topic\n"red cat,a\nblue dog,b\n'),
         ("data.csv", "cannot read CSV", "EOF inside string")),
    Case("csv_ragged_row", _bytes_file("data.csv", b"text,topic\nred cat,a\nblue,dog,b\n"),
         ("data.csv", "cannot read CSV", "Expected 2 fields in line 3, saw 3")),
    Case("folder_as_data_file", _folder_as_data_file, ("data.jsonl", "is a folder, not a data file")),
    Case("missing_positional_data", _missing_positional_data, ("./data/train.jsonl", "no such file or folder")),
    Case("label_quota_cannot_be_met", _build_with(rows=_one_class_short),
         ("label field 'topic'", "label class 'b' has 1 example", "eval quota of 4", "at most 3 fits")),
    Case("lm_without_tokenizer", _with_model(_copy_without_tokenizer),
         ("broken-lm", "has no tokenizer files", "tokenizer.json", "0 tokens")),
    Case("lm_truncated_weights", _with_model(_copy_with_truncated_weights),
         ("broken-lm/model.safetensors", "the weights file is truncated")),
    Case("lm_query_of_zero_tokens", _with_model(_copy_with_accent_stripping_tokenizer, rows=_lone_accent_query),
         ("example 'data-5'", "field 'query'", "the query '\\u0301' gives 0 tokens")),
    Case("lm_relative_folder_missing", _relative_lm("./models/x"), ("no such folder ./models/x",)),
    Case("lm_hub_id_not_cached_offline", _relative_lm("no-such-org-xyz/tiny-lm"),
         ("'no-such-org-xyz/tiny-lm'", "not in the local Hugging Face cache", "HF_HUB_OFFLINE"), process=True),
    Case("max_steps_zero", _build_with("--max-steps", "0"), ("error: --max-steps must be a whole number >= 1, got 0",)),
    Case("max_steps_negative_score", _score_with("--max-steps", "-3"), ("error: --max-steps must be a whole number >= 1, got -3",)),
    Case("max_steps_not_a_number", _build_with("--max-steps", "ten"), ("argument --max-steps", "whole number", "'ten'"),
         process=True),
    Case("folds_one", _build_with("--folds", "1"), ("error: --folds must be a whole number >= 2, got 1",)),
    Case("seed_negative", _score_with("--seed", "-1"), ("error: --seed must be a whole number >= 0 (a random seed), got -1",)),
    Case("eval_size_zero", _build_with("--eval-size", "0"), ("error: --eval-size must be a count (a whole number >= 1) or a fraction in (0, 1), got 0",)),
    Case("eval_size_nan", _build_with("--eval-size", "nan"), ("error: --eval-size must be a count", "(0, 1), got nan")),
    Case("demo_n_zero", lambda f: ["demo", "--n", "0", "--out", str(f / "out")], ("error: --n must be a whole number >= 1 (synthetic examples), got 0",)),
    # issue 18 item 2: a missing label is an error (count + first example), not a class of its own
    Case("label_null", _build_with(rows=lambda: _with_missing_labels(None)),
         ("data.jsonl", "field 'topic'", "3 of 40 examples have no label", "the first is 'data-5'",
          "--missing-labels drop")),
    Case("label_nan", _build_with(rows=lambda: _with_missing_labels(float("nan"))),
         ("field 'topic'", "3 of 40 examples have no label (null, NaN or empty)")),
    Case("label_empty_csv", _bytes_file("data.csv", b"text,topic\nred cat,a\nblue dog,\nbig tree,b\n"),
         ("data.csv", "field 'topic'", "1 of 3 examples have no label", "'data-1'")),
    Case("missing_labels_unknown_choice", _build_with("--missing-labels", "keep"),
         ("argument --missing-labels", "invalid choice: 'keep'")),
    # issue 18 item 3: a user field lsplits writes is refused before any work, with the way out
    *[Case(f"user_field_{name}", _build_with(rows=lambda name=name: [dict(r, **{name: 1}) for r in text_rows()]),
           (f"field {name!r}", f"lsplits writes its own {name!r}", f"--rename {name}={name}_orig"))
      for name in ("ll_score", "ll_tokens", "length")],
    Case("spider_user_field_hardness", spider_with_query("SELECT name FROM singer", hardness="easy"),
         ("field 'hardness'", "lsplits writes its own 'hardness'", "--rename hardness=hardness_orig")),
    Case("rename_unknown_field", _build_with("--rename", "size=size_orig"),
         ("--rename size=size_orig", "there is no field 'size'", "text, topic")),
    Case("rename_onto_an_existing_field", _build_with("--rename", "text=topic"),
         ("--rename text=topic", "already has a field 'topic'")),
    Case("rename_without_equals", _build_with("--rename", "length"), ("error: --rename entries must be OLD=NEW", "got 'length'")),
]


# ----------------------------------------------------------------------------------------------------------

ALL_CASES = CASES_OUTPUTS + CASES_SPIDER + CASES_UE + CASES_DATA


def _snapshot(folder: Path, skip: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``folder`` outside ``skip`` (and caches), with size, mtime and content."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and skip not in path.parents and path != skip and "cache" not in path.parts:
            stat = path.stat()
            state[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns, path.read_bytes())
    return state


OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

_HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
"""Warning classes a fresh Python process does not print (outside ``__main__``)."""


def run_cli(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m lsplits ARGV`` offline in a fresh process."""
    env = {**os.environ, **OFFLINE,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "lsplits", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_in_process(argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
                   capsys: pytest.CaptureFixture[str]) -> subprocess.CompletedProcess:
    """Run ``lsplits.cli.parser.main(ARGV)`` offline in ``cwd`` here, as :func:`run_cli` would in a fresh process:
    a SystemExit (argparse's 2) is the return code, logging goes to stderr as ``configure_logging`` sets it up
    there, the warnings a fresh process prints become stderr lines, and the signal handlers are restored after.
    An exception escaping ``main`` (a traceback in a process) fails the test."""
    from lsplits.cli.parser import main

    monkeypatch.chdir(cwd)
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    handlers_of_signal = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    capsys.readouterr()
    root.handlers = []  # so that configure_logging's basicConfig logs to (captured) stderr, as in a process
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for category in _HIDDEN_BY_DEFAULT:
                warnings.filterwarnings("ignore", category=category)
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
                if isinstance(exit_.code, str):
                    print(exit_.code, file=sys.stderr)
        for warning in caught:
            print(warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno,
                                         "").strip(), file=sys.stderr)
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers = handlers
        root.setLevel(level)
        for number, handler in handlers_of_signal.items():
            signal.signal(number, handler)
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, captured.out, captured.err)


@pytest.mark.parametrize("case", [pytest.param(case, marks=[pytest.mark.process] if case.process else [])
                                  for case in ALL_CASES], ids=[case.name for case in ALL_CASES])
def test_bad_input_gives_one_line(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    argv = case.setup(tmp_path)
    out = tmp_path / case.out
    before = _snapshot(tmp_path, out)
    result = run_cli(argv, tmp_path) if case.process else run_in_process(argv, tmp_path, monkeypatch, capsys)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(lines) == 1, result.stderr[-3000:]
    for fragment in case.expect:
        assert fragment in lines[0], (fragment, lines[0])
    assert _snapshot(tmp_path, out) == before
