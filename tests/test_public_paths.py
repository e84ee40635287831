"""The short public paths of the user-facing functions are the very objects of their defining modules, and
importing the packages that offer them stays cheap (they load on first use)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

SHORT_PATHS = {
    "lsplits.generation.generate_beams": "lsplits.generation.search.generate_beams",
    "lsplits.uncertainty.estimate": "lsplits.uncertainty.estimators.estimate",
    "lsplits.uncertainty.estimate_many": "lsplits.uncertainty.estimators.estimate_many",
    "lsplits.uncertainty.calibrate_threshold": "lsplits.uncertainty.selective.calibrate_threshold",
    "lsplits.similarity.get": "lsplits.similarity.registry.get",
    "lsplits.similarity.register": "lsplits.similarity.registry.register",
    "lsplits.similarity.Similarity": "lsplits.similarity.registry.Similarity",
    "lsplits.similarity.smatch": "lsplits.similarity.amr.smatch.SMATCH",
    "lsplits.similarity.smatch_corrected": "lsplits.similarity.amr.smatch.SMATCH_CORRECTED",
    "lsplits.similarity.smatchpp": "lsplits.similarity.amr.smatchpp_metric.SMATCHPP",
    "lsplits.similarity.s2match": "lsplits.similarity.amr.s2match.S2MATCH",
    "lsplits.similarity.sema": "lsplits.similarity.amr.sema.SEMA",
    "lsplits.similarity.wlk": "lsplits.similarity.amr.wlk.WLK",
    "lsplits.similarity.sembleu": "lsplits.similarity.amr.sembleu.SEMBLEU",
    "lsplits.similarity.rougel": "lsplits.similarity.lexical.ROUGE_L",
    "lsplits.similarity.rouge1_stem": "lsplits.similarity.lexical.ROUGE_1_STEM",
    "lsplits.similarity.bleu": "lsplits.similarity.lexical.BLEU",
}


def resolve(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("short", sorted(SHORT_PATHS))
def test_a_short_path_is_the_object_of_the_long_one(short):
    assert resolve(short) is resolve(SHORT_PATHS[short])


def test_every_similarity_short_name_is_a_registered_similarity():
    import lsplits.similarity as similarity
    from lsplits.similarity import registry

    names = [name for name in similarity.__all__ if name not in ("get", "available", "register", "Similarity")]
    assert {name.replace("_", "-") if name.replace("_", "-") in registry.available() else name
            for name in names} == set(registry.available())
    for name in names:
        assert getattr(similarity, name).name in registry.available()
    with pytest.raises(ImportError):
        exec("from lsplits.similarity import smatch_plus_plus")  # an unknown name is no attribute
    assert sorted(similarity.__all__) == sorted(set(similarity.__all__))
    from lsplits.generation import generate_beams  # the README's form
    from lsplits.uncertainty import calibrate_threshold

    assert calibrate_threshold.__module__ == "lsplits.uncertainty.selective"
    assert generate_beams.__module__ == "lsplits.generation.search"


@pytest.mark.process
def test_importing_the_packages_loads_no_torch_and_no_metric():
    code = ("import sys, lsplits.generation, lsplits.similarity, lsplits.uncertainty; "
            "print(sorted(m for m in sys.modules if m in ('torch', 'transformers', 'penman') "
            "or m.startswith(('lsplits.similarity.amr', 'lsplits.generation.search', 'lsplits.uncertainty.selective'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
