"""``--dtype``: how ``auto`` resolves (CPU flags and GPU support injected), that bf16 and fp32 scores give the
same split membership up to ties within bf16 precision, and that a build records its dtype in the card and
``lsplits.json``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from lm_fixtures import tiny_model_folder, tiny_records

from lsplits.errors import ConfigError
from lsplits.lm.dtype import (
    CPU_BF16_MIN_PARAMETERS,
    autocast,
    config_parameters,
    count_parameters,
    host_cpu_flags,
    resolve_dtype,
)
from lsplits.lm.plan import RunPlan
from lsplits.lm.scoring import load_causal_lm, score_pairs
from lsplits.splits.engine import likelihood_partition

AMX = {"fpu", "avx512f", "amx_tile", "amx_bf16"}
AVX512_BF16 = {"fpu", "avx512f", "avx512_bf16"}
PLAIN = {"fpu", "sse2", "avx2", "avx512f"}
LARGE, SMALL = CPU_BF16_MIN_PARAMETERS, CPU_BF16_MIN_PARAMETERS - 1


def test_auto_is_bf16_on_a_cpu_with_amx_or_avx512_bf16_for_models_large_enough():
    for flags in (AMX, AVX512_BF16):
        assert resolve_dtype("auto", "cpu", n_parameters=LARGE, cpu_flags=flags) == "bf16"
        assert resolve_dtype("auto", "cpu", n_parameters=SMALL, cpu_flags=flags) == "fp32"  # too small to gain
        assert resolve_dtype("auto", torch.device("cpu"), n_parameters=None, cpu_flags=flags) == "bf16"
    assert resolve_dtype("auto", "cpu", n_parameters=LARGE, cpu_flags=PLAIN) == "fp32"
    assert resolve_dtype("auto", "cpu", n_parameters=LARGE, cpu_flags=set()) == "fp32"
    asked = []  # the size is computed only when it decides
    assert resolve_dtype("auto", "cpu", n_parameters=lambda: asked.append(1) or LARGE, cpu_flags=PLAIN) == "fp32"
    assert not asked
    assert resolve_dtype("auto", "cpu", n_parameters=lambda: asked.append(1) or SMALL, cpu_flags=AMX) == "fp32"
    assert asked == [1]


def test_auto_is_bf16_on_a_gpu_that_supports_it_whatever_the_size():
    assert resolve_dtype("auto", "cuda:0", n_parameters=10, cuda_bf16=True, cpu_flags=PLAIN) == "bf16"
    assert resolve_dtype("auto", torch.device("cuda", 1), n_parameters=LARGE, cuda_bf16=False) == "fp32"
    with pytest.raises(ConfigError, match="dtype bf16: this GPU does not support bfloat16"):
        resolve_dtype("bf16", "cuda", cuda_bf16=False)
    assert resolve_dtype("fp32", "cuda", cuda_bf16=True) == "fp32"


def test_an_explicit_dtype_wins_and_a_wrong_one_is_refused(caplog):
    assert resolve_dtype("fp32", "cpu", n_parameters=LARGE, cpu_flags=AMX) == "fp32"
    assert resolve_dtype("bf16", "cpu", n_parameters=10, cpu_flags=AMX) == "bf16"
    assert resolve_dtype("bf16", "cpu", n_parameters=10, cpu_flags=PLAIN) == "bf16"
    assert "without AMX or AVX-512-BF16" in caplog.text  # runs, emulated, with a warning
    with pytest.raises(ConfigError, match="^dtype must be one of auto, fp32, bf16, got 'fp16'$"):
        resolve_dtype("fp16", "cpu")
    with pytest.raises(ConfigError, match="^dtype must be one of .*, got 'half'$"):
        RunPlan.make("scratch", "ft", dtype="half")
    with pytest.raises(ConfigError, match="resolved dtype"):
        autocast("auto", "cpu")


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse2 avx512f amx_bf16 amx_tile\n\n"
                    "processor\t: 1\nflags\t\t: fpu\n")
    assert host_cpu_flags(str(info)) == frozenset({"fpu", "sse2", "avx512f", "amx_bf16", "amx_tile"})
    assert host_cpu_flags(str(tmp_path / "absent")) == frozenset()


def test_parameters_are_counted_from_the_config_as_the_model_has_them(tmp_path):
    folder = tiny_model_folder(tmp_path / "tiny")
    model, _ = load_causal_lm(folder)
    assert config_parameters(folder) == count_parameters(model)  # tied head counted once, nothing allocated
    plan = RunPlan.make("scratch", "ft", dtype="auto")
    assert 100_000 < plan.n_parameters() < CPU_BF16_MIN_PARAMETERS  # the scratch LM stays fp32 under auto
    assert plan.resolved_dtype("cpu") == "fp32" and RunPlan.make("scratch", dtype="bf16").resolved_dtype("cpu") == "bf16"
    assert plan.to_dict()["dtype"] == "auto"


def test_bf16_and_fp32_give_the_same_split_up_to_ties_within_bf16_precision(tmp_path):
    model, tokenizer = load_causal_lm(tiny_model_folder(tmp_path / "tiny"))
    records = tiny_records(36)
    prompts, queries = [r["prompt"] for r in records], [r["query"] for r in records]
    fp32, tokens = score_pairs(model, tokenizer, prompts, queries, progress=False, dtype="fp32")
    bf16, tokens_bf16 = score_pairs(model, tokenizer, prompts, queries, progress=False, dtype="bf16")
    assert np.array_equal(tokens, tokens_bf16) and bf16.dtype == np.float64
    difference = np.abs(bf16 - fp32)
    assert 0 < difference.max() < 0.02 * np.abs(fp32).max()  # bf16 really ran, and stays close
    lengths = [len(q.split()) for q in queries]
    for partition in (lambda s: likelihood_partition(s, 10), lambda s: likelihood_partition(s, 10, lengths=lengths)):
        eval_32, eval_16 = set(partition(fp32).eval.tolist()), set(partition(bf16).eval.tolist())
        left, joined = eval_32 - eval_16, eval_16 - eval_32
        assert len(left) == len(joined)
        for a in left:  # a swap is allowed only between examples whose fp32 scores bf16 cannot tell apart
            for b in joined:
                assert abs(fp32[a] - fp32[b]) <= difference[a] + difference[b], (a, b)


def test_a_build_records_its_dtype_in_the_card_and_lsplits_json(tmp_path):
    from lm_fixtures import TINY_TRAIN, tiny_sentences

    from lsplits.building.card import CardInfo
    from lsplits.building.pipeline import DatasetSpec, build_splits, export_dataset
    from lsplits.building.settings import BuildSettings
    from lsplits.data.loading import prepare_examples
    from lsplits.data.tasks import generic_task
    from lsplits.lm.training import TrainConfig

    spec = DatasetSpec(task=generic_task("text"), card=CardInfo(pretty_name="Toy"))
    rows = [{"text": sentence} for sentence in tiny_sentences(24)]
    loaded = prepare_examples([("toy", rows, "toy rows")], spec.task)
    settings = BuildSettings(query_field="text", configs=("ll_split",), eval_size=6, folds=2, dtype="bf16")
    result = build_splits(spec, loaded, settings, train_config=TrainConfig.scratch(**TINY_TRAIN), progress=False,
                          cache_dir=tmp_path / "cache")
    assert result.dtypes == {"ft": "bf16"}
    out = export_dataset(spec, result, tmp_path / "toy", settings)
    meta = json.loads((out / "lsplits.json").read_text())
    assert (meta["settings"]["dtype"], meta["dtypes_used"]) == ("bf16", {"ft": "bf16"})
    assert "dtype" not in meta["runs"]["ft"]  # the settings hold it, once
    card = (out / "README.md").read_text()
    assert "Compute dtype: ft setting bf16 autocast (fp32 weights, log-softmax and sums)." in card
    assert '"dtypes_used": {\n    "ft": "bf16"' in card  # the Settings section
    run = json.loads(next((tmp_path / "cache").glob("*/run.json")).read_text())
    assert (run["dtype"], run["dtype_used"]) == ("bf16", "bf16")
