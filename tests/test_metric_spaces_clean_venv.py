"""The staged metric Spaces load and compute in a venv that has only evaluate and their requirements.

That venv (cached by tests/venvs.py, keyed by the requirements) cannot ``import lsplits``; each
module is loaded with ``evaluate.load(DIR/NAME)`` there and its results must equal the library's here.
"""

from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pytest
from venvs import cached_venv, clean_env, site_packages_mib

from lsplits.hub.metric_spaces import METRIC_MODULES, stage_metrics
from lsplits.uncertainty.beam import beam_uncertainty_outputs
from lsplits.uncertainty.prr import prr_outputs
from lsplits.uncertainty.quality import similarity_outputs
from lsplits.uncertainty.ue_metrics import compute_metrics

pytestmark = pytest.mark.slow

_rng = np.random.default_rng(7)
UNCERTAINTIES = [float(x) for x in _rng.random(40)]
QUALITIES = [float(x) for x in np.clip(1 - np.array(UNCERTAINTIES) + _rng.normal(0, 0.3, 40), 0, 1)]
GRAPHS = ["(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
          "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))",
          "(w / want-01 :ARG0 (g / girl) :ARG1 (g2 / go-02 :ARG0 g))",
          "(l / like-01 :ARG0 (c / cat) :ARG1 (m / milk))",
          "(l / like-01 :ARG0 (d / dog))",
          "not a graph ("]
CANDIDATES = [GRAPHS[:3], GRAPHS[3:], [GRAPHS[0], GRAPHS[0], GRAPHS[5]], GRAPHS[1:5]]
SIMILARITIES = ("smatchpp", "smatch", "s2match", "sema", "wlk", "sembleu")

# Run by the clean venv's python: evaluate.load each staged folder and print the results as JSON.
_RUN = """
import json, sys
import evaluate
try:
    import lsplits
    sys.exit("lsplits is importable in the clean venv")
except ImportError:
    pass
staged, inputs = sys.argv[1], json.loads(sys.stdin.read())
u, q, candidates, graphs = inputs["u"], inputs["q"], inputs["candidates"], inputs["graphs"]
out = {"prr": evaluate.load(f"{staged}/prr").compute(uncertainties=u, qualities=q, n_bootstrap=200),
       "ue_metrics": evaluate.load(f"{staged}/ue_metrics").compute(uncertainties=u, qualities=q, bad_below=0.5)}
for name in inputs["similarities"]:
    out["beam_uncertainty/" + name] = evaluate.load(f"{staged}/beam_uncertainty", name).compute(
        candidates=candidates, estimators=inputs["estimators"])
    out["amr_similarity/" + name] = evaluate.load(f"{staged}/amr_similarity", name).compute(
        predictions=graphs, references=list(reversed(graphs[:-1])) + [graphs[0]])
print(json.dumps(out))
"""

ESTIMATORS = ["lexsim", "eigv", "ecc", "degmat", "numsemsets", "labelprob", "semantic_entropy", "luq", "kle"]


def _expected() -> dict:
    references = list(reversed(GRAPHS[:-1])) + [GRAPHS[0]]
    out = {"prr": prr_outputs(UNCERTAINTIES, QUALITIES, n_bootstrap=200),
           "ue_metrics": compute_metrics(UNCERTAINTIES, QUALITIES, None, bad_below=0.5)}
    for name in SIMILARITIES:
        out["beam_uncertainty/" + name] = beam_uncertainty_outputs(CANDIDATES, name, estimators=ESTIMATORS)
        out["amr_similarity/" + name] = similarity_outputs(name, GRAPHS, references, default="smatchpp")
    return json.loads(json.dumps(out, default=float))


def _assert_close(got, expected, where: str) -> None:
    if isinstance(expected, dict):
        assert set(got) == set(expected), where
        for key in expected:
            _assert_close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            _assert_close(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got), where
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert abs(got - expected) <= 1e-12, (where, got, expected)
    else:
        assert got == expected, where


@pytest.mark.process
def test_staged_spaces_compute_the_library_results_without_lsplits(tmp_path):
    staged = stage_metrics(tmp_path / "spaces")
    requirements = sorted({line for name in METRIC_MODULES
                           for line in (staged / name / "requirements.txt").read_text(encoding="utf-8").split()})
    python = cached_venv("metric-spaces", requirements)
    inputs = {"u": UNCERTAINTIES, "q": QUALITIES, "candidates": CANDIDATES, "graphs": GRAPHS,
              "similarities": list(SIMILARITIES), "estimators": ESTIMATORS}
    done = subprocess.run([str(python), "-c", _RUN, str(staged)], input=json.dumps(inputs), capture_output=True,
                          text=True, env=clean_env(), cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    _assert_close(got, _expected(), "results")
    assert got["beam_uncertainty/smatchpp"]["invalid_candidates"] == [0, 1, 1, 0]  # the invalid graph was seen
    print(f"clean metric venv: {site_packages_mib(python):.0f} MiB of site-packages for {', '.join(requirements)}")
