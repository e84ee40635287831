"""benchmarks/parser_findings.py's core (:func:`run_findings`) on two tiny untrained AMR parsers and the 8 real
sentences of tests/fixtures/amr_sample.jsonl: one table row per parser x decoding, its top-1 Smatch++ that of the written beams, PRRs computed by the
cross-system study, the Figure-1 correlation over the systems that have a mean PRR, and beams reused on a rerun."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = Path(__file__).parent / "fixtures" / "amr_sample.jsonl"


@pytest.fixture
def findings_module(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # the script imports its sibling data_paths
    import parser_findings

    yield parser_findings
    sys.modules.pop("parser_findings", None)


def untrained_parser(folder: Path, rows: list[dict], seed: int, share: float) -> Path:
    """A freshly initialised one-layer parser over the rows' target vocabulary, saved as a parser folder."""
    import torch

    from lsplits.amr_parser.linearize import linearize
    from lsplits.amr_parser.model import DecoderShape, build_parser, save_parser
    from lsplits.amr_parser.train import target_vocab

    torch.manual_seed(seed)
    model, tokenizer = build_parser(target_vocab([linearize(row["amr"]) for row in rows]),
                                    DecoderShape(layers=1, feed_forward=64, max_length=64))
    model.eval()
    save_parser(model, tokenizer, folder, card={"training": {"train_share": share}})
    return folder


def test_findings_table_from_real_beams_of_untrained_parsers(tmp_path, findings_module):
    from lsplits.generation.decoding import DECODINGS
    from lsplits.similarity import registry
    from lsplits.uncertainty.methods import FAMILIES
    from lsplits.uncertainty.quality import placeholder_for, score_predictions

    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    parsers = {"half": untrained_parser(tmp_path / "half", rows, 1, 0.5),
               "full": untrained_parser(tmp_path / "full", rows, 2, 1.0)}
    settings = findings_module.Settings(k=3, max_new_tokens=24, n_bootstrap=20, workers=1, progress=False,
                                        write_report=False)
    out, work = tmp_path / "out", tmp_path / "work"
    found = findings_module.run_findings(parsers, rows, out, work, settings)

    systems = [f"{parser}-{decoding}" for parser in parsers for decoding in DECODINGS]
    assert [row["system"] for row in found.table] == systems
    assert all(set(row) == set(findings_module.FINDINGS_COLUMNS) for row in found.table)
    assert [row["train_share"] for row in found.table] == [0.5] * 3 + [1.0] * 3
    gold = [row["amr"] for row in rows]
    for row in found.table:
        beams = [json.loads(line) for line in (out / "beams" / f"{row['system']}.jsonl").read_text().splitlines()]
        assert [b["id"] for b in beams] == [r["id"] for r in rows]
        assert all(len(b["candidates"]) == len(b["logprobs"]) == 3 for b in beams)
        top1 = [b["candidates"][0] for b in beams]
        metric = registry.get("smatchpp")  # an empty (invalid) top-1 scores as the study's placeholder graph
        expected = score_predictions(metric, top1, gold, placeholder=placeholder_for(metric)).corpus
        assert row["top1_smatchpp"] == pytest.approx(expected)
        valid = sum(bool(c) for b in beams for c in b["candidates"]) / (3 * len(rows))
        assert row["valid_share"] == pytest.approx(valid, abs=1e-4)
        assert row["mean_prr_k3"] == row["mean_prr"] or math.isnan(row["mean_prr"])  # k = 3 is the only size
        assert math.isnan(row["mean_prr_k10"])  # beams of 3 offer no k = 10
    assert len({row["top1_smatchpp"] for row in found.table}) > 1  # the systems' own beams, not one value
    defined = [row["mean_prr"] for row in found.table if not math.isnan(row["mean_prr"])]
    assert defined and all(-1.5 <= value <= 1.5 for value in defined)
    by_family = {family: [r for r in found.families if r["family"] == family] for family in FAMILIES}
    assert all(by_family.values())  # black-box, gray-box and hybrid estimators all studied
    assert {r["system"] for r in found.families} == set(systems)
    correlation = next(r for r in found.correlations if r["performance"] == "top1_smatchpp")
    assert correlation["n"] == len(defined)
    assert (out / "findings.csv").read_text().splitlines()[0].split(",") == list(findings_module.FINDINGS_COLUMNS)
    assert (out / "figures" / "figure1_smatchpp_vs_mean_prr.png").is_file()
    assert any(name.startswith("beams ") for name in found.timings)

    again = findings_module.run_findings(parsers, rows, out, work, settings)  # the beams come from work
    assert not any(name.startswith("beams ") for name in again.timings)
    assert [r["top1_smatchpp"] for r in again.table] == [r["top1_smatchpp"] for r in found.table]
