"""One error family: every error a user can cause is an LsplitsError (the CLI prints one line), and
the library's input and option errors are also ValueErrors for Python callers."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lsplits.building.plots import score_vs_length_figure
from lsplits.data.synthetic import make_demo_dataset
from lsplits.errors import ConfigError, DataError, InvalidInput, InvalidOption, LsplitsError
from lsplits.generation.search import check_texts
from lsplits.lm.encode import encode_pairs
from lsplits.params import check
from lsplits.runtime.pysource import parse_file
from lsplits.similarity.amr import sema, sembleu, smatch, smatchpp_metric
from lsplits.similarity.amr.graph import parse_amr
from lsplits.similarity.amr.s2match import S2MATCH
from lsplits.splits.divergence import chernoff_coefficient
from lsplits.uncertainty.beam import beam_uncertainties
from lsplits.uncertainty.estimators import check_estimators, eigv, estimate, get_estimator
from lsplits.uncertainty.prr import prr, prr_with_ci, rejection_curve
from lsplits.uncertainty.ue_metrics import UndefinedMetricWarning, compute_metrics, roc_auc

ROOT = Path(__file__).resolve().parents[1]
BUILTIN_ERRORS = {"ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "Exception", "OSError"}
OPEN_BUILTIN_RAISES: set[tuple[str, str]] = set()  # none left: any builtin raise in the library fails
GRAPH = "(a / b)"
FRAME = pd.DataFrame({"ll_score": [-1.0, -2.0], "length": [1, 2]})
CASES: dict[str, tuple[Callable[[], object], type[LsplitsError], str]] = {
    "prr lengths": (lambda: prr([0.1], [0.2, 0.3]), InvalidInput, "1 uncertainties but 2 qualities"),
    "prr empty": (lambda: prr_with_ci([], []), InvalidInput, "at least one example"),
    "prr NaN": (lambda: rejection_curve([float("nan")], [1.0]), InvalidInput, "must be finite"),
    "option range": (lambda: check("max_rejection", 1.5), InvalidOption, "max"),
    "matrix shape": (lambda: eigv([[1.0, 0.5]]), InvalidInput, "must be square"),
    "matrix empty": (lambda: eigv(np.zeros((0, 0))), InvalidInput, "at least one candidate"),
    "matrix NaN": (lambda: eigv([[1.0, float("nan")], [0.0, 1.0]]), InvalidInput, "NaN"),
    "estimator name": (lambda: get_estimator("nope"), InvalidOption, "estimator must be one of lexsim, .*, got 'nope'"),
    "estimate name": (lambda: estimate("nope", [[1.0]]), InvalidOption, "estimator must be one of lexsim, "),
    "beam estimator": (lambda: beam_uncertainties([["a"]], estimators=["nope"]), InvalidOption,
                       "estimators item 0 must be one of lexsim, .*, got 'nope'"),
    "beam empty": (lambda: beam_uncertainties([[]]), InvalidInput, "at least one candidate"),
    "smatch corpus": (lambda: smatch.corpus_smatch([parse_amr(GRAPH)], []), InvalidInput,
                      "1 predictions but 0 references"),
    "sema corpus": (lambda: sema.corpus_sema([], [sema.prepare_sema(GRAPH)]), InvalidInput, "0 predictions"),
    "sembleu corpus": (lambda: sembleu.corpus_sembleu([], [sembleu.prepare_sembleu(GRAPH)]), InvalidInput,
                       "0 hypotheses but 1 references"),
    "smatchpp corpus": (lambda: smatchpp_metric.corpus_f1([], [None]), InvalidInput, "0 predictions"),
    "s2match corpus": (lambda: S2MATCH.corpus_score([], [parse_amr(GRAPH)]), InvalidInput, "0 predictions"),
    "invalid output": (lambda: parse_amr("(a / b"), InvalidInput, "PENMAN"),
    "divergence alpha": (lambda: chernoff_coefficient({"a": 1}, {"a": 1}, 2.0), InvalidOption, "alpha"),
    "plot mask": (lambda: score_vs_length_figure(FRAME, [True]), InvalidInput, "1 entries for 2 rows"),
    "demo size": (lambda: make_demo_dataset(-1), InvalidOption, "n must be >= 0"),
    "encode lengths": (lambda: encode_pairs(None, ["p"], ["q", "r"], max_length=8), InvalidInput,
                       "1 prompts, 2 queries and no ids"),
    # issue 18 item 5: Python API misuse, one line naming the argument
    "eigv below 0": (lambda: estimate("eigv", [[1, -0.5], [-0.5, 1]]), InvalidInput,
                     r"similarity matrix must lie in \[0, 1\], got values from -0.5 to 1"),
    "lexsim below 0": (lambda: estimate("lexsim", [[1, -1], [-1, 1]]), InvalidInput, r"must lie in \[0, 1\]"),
    "matrix above 1": (lambda: estimate("degmat", [[1, 2], [2, 1]]), InvalidInput, "from 1 to 2"),
    "matrix strings": (lambda: eigv([["a", "b"], ["c", "d"]]), InvalidInput, "must be a square array of numbers"),
    "lexsim mixed candidates": (lambda: estimate("lexsim", ["a b", 3]), InvalidInput,
                                r"candidates must all be strings, candidate #1 is 3 \(int\)"),
    "estimator None": (lambda: estimate(None, [[1.0]]), InvalidOption, "estimator must be one of lexsim, .*, got None"),
    "ecc threshold string": (lambda: estimate("ecc", [[1.0]], ecc_threshold="0.85"), InvalidOption,
                             r"^ecc_threshold must be a number in \(0, 2\] .*, got '0.85'"),
    "sets threshold string": (lambda: estimate("numsemsets", [[1.0]], sets_threshold="0.85"), InvalidOption,
                              r"^sets_threshold must be a number in \(0, 1\] \(a similarity\), got '0.85'"),
    "kle t string": (lambda: estimate("kle", [[1.0]], kle_t="0.3"), InvalidOption,
                     r"^kle_t must be a number > 0 \(the heat-kernel time\), got '0.3'"),
    "kle flag string": (lambda: estimate("kle", [[1.0]], kle_scale="no"), InvalidOption,
                        "^kle_scale must be True or False, got 'no'"),
    "prr string": (lambda: prr("0.1 0.2", [0.1, 0.2]), InvalidInput,
                   "PRR: uncertainties must be a list of numbers, got the string"),
    "prr non-numeric": (lambda: prr([0.1, 0.2], [0.5, "high"]), InvalidInput,
                        "PRR: qualities must be numbers, got 'high'"),
    "metric non-numeric": (lambda: compute_metrics([0.1, None], [0.5, 0.6], ["prr"]), InvalidInput,
                           "an uncertainty metric: uncertainties must be numbers, got None"),
    "bad_below 2": (lambda: roc_auc([0.1, 0.2], [0.5, 0.6], bad_below=2), InvalidOption, r"bad_below must be a number in \(0, 1\]"),
    "bad_below 0": (lambda: roc_auc([0.1, 0.2], [0.5, 0.6], bad_below=0), InvalidOption, r"bad_below must be a number in \(0, 1\]"),
    "metrics one string": (lambda: compute_metrics([0.1, 0.2], [0.5, 0.6], "prr"), InvalidOption,
                           "metrics must be a non-empty list, each one of prr, .*, got 'prr'"),
    "metric name None": (lambda: compute_metrics([0.1, 0.2], [0.5, 0.6], [None]), InvalidOption,
                         "metrics item 0 must be one of prr, .*, got None"),
    "estimators one string": (lambda: check_estimators("eigv"), InvalidOption,
                              "estimators must be a non-empty list, each one of lexsim, .*, got 'eigv'"),
    "normaliser None": (lambda: compute_metrics([0.1, 0.2], [0.5, 0.6], ["ece"], normalizer=None), InvalidOption,
                        "normalizer must be one of minmax, .*, got None"),
    "ece bins string": (lambda: compute_metrics([0.1, 0.2], [0.5, 0.6], ["ece"], n_bins="10"), InvalidOption,
                        "n_bins must be a whole number >= 1 .*, got '10'"),
    "beams texts string": (lambda: check_texts("A man is here."), InvalidInput, "texts must be a list of strings"),
    "beams texts empty": (lambda: check_texts([""]), InvalidInput, r"texts\[0\] is an empty string"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_library_errors_are_lsplits_errors_and_value_errors(name):
    call, kind, message = CASES[name]
    with pytest.raises(kind, match=message) as caught:
        call()
    assert isinstance(caught.value, LsplitsError) and isinstance(caught.value, ValueError)
    assert isinstance(caught.value, DataError if kind is InvalidInput else ConfigError)


def test_no_bad_example_at_bad_below_warns():
    with pytest.warns(UndefinedMetricWarning, match="0 bad and 2 good predictions at bad_below=0.1"):
        assert math.isnan(roc_auc([0.1, 0.2], [0.5, 0.6], bad_below=0.1))


def test_no_builtin_error_is_raised_by_lsplits_or_its_metric_modules():
    found = set()
    for path in [*sorted((ROOT / "lsplits").rglob("*.py")), *sorted((ROOT / "metrics").rglob("*.py"))]:
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.Raise) and node.exc is not None:
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(target, ast.Name) and target.id in BUILTIN_ERRORS:
                    found.add((path.relative_to(ROOT).as_posix(), target.id))
    assert found == OPEN_BUILTIN_RAISES


def test_every_error_class_of_lsplits_is_in_errors_py():
    """No exception class is defined outside lsplits/errors.py, and each one there is in its docstring's rule."""
    from lsplits import errors

    outside = []
    for path in sorted((ROOT / "lsplits").rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.ClassDef) and any(
                    (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")).endswith(
                        ("Error", "Exception", "Invalid", "InvalidInput", "InvalidOutput", "InvalidOption",
                         "Failure")) for base in node.bases):
                outside.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}")
    assert [entry for entry in outside if not entry.startswith("lsplits/errors.py:")] == []
    classes = [value for value in vars(errors).values() if isinstance(value, type) and issubclass(value, BaseException)]
    assert {c.__name__ for c in classes} == {"LsplitsError", "DataError", "ConfigError", "SplitInvariantError",
                                             "InvalidInput", "InvalidOutput", "InvalidOption", "SimilarityFailure",
                                             "MissingExtra", "WorkerLost", "Stopped"}
    for cls in classes:
        assert f":class:`{cls.__name__}`" in errors.__doc__, f"{cls.__name__} has no rule in errors.py's docstring"
    assert all(issubclass(c, LsplitsError) for c in classes if c is not errors.SimilarityFailure)
    assert not issubclass(errors.SimilarityFailure, LsplitsError)  # a bug keeps its traceback


BOUNDARIES = ("lsplits/cli/",)  # and spaces/: the Space is the other process boundary
THREAD_HANDOFFS = {("lsplits/runtime/cancel.py", "run")}
"""(file, function) of helper threads that catch everything to hand it to the waiting thread, which raises it
(:func:`lsplits.runtime.cancel.wait_stoppable`): nothing is swallowed, it crosses a thread."""


def _broad(handler: ast.ExceptHandler) -> bool:
    """Whether ``handler`` catches Exception or BaseException (alone or in a tuple), or everything."""
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(name, ast.Name) and name.id in ("Exception", "BaseException") for name in names)


def test_exception_is_caught_only_at_process_boundaries_or_re_raised():
    """A broad catch in the library must re-raise (adding context); turning a bug into a value is refused."""
    swallowed = []
    for path in sorted((ROOT / "lsplits").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(BOUNDARIES):
            continue
        tree = parse_file(path)
        handed = {id(node) for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
                  and (relative, function.name) in THREAD_HANDOFFS for node in ast.walk(function)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and _broad(node) and id(node) not in handed and not any(
                    isinstance(inner, ast.Raise) for statement in node.body for inner in ast.walk(statement)):
                swallowed.append(f"{relative}:{node.lineno}")
    assert swallowed == []


def test_a_bad_value_is_shown_in_one_short_line_even_a_model_object():
    import torch

    from lsplits.building.settings import BuildSettings
    from lsplits.errors import InvalidOption

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    assert repr(model).count("\n") >= 4  # what the message used to carry
    with pytest.raises(InvalidOption) as caught:
        BuildSettings(lm=model)
    assert str(caught.value) == ("lm must be a non-empty string ('scratch', a Hub model id or a model folder), "
                                 "got a Sequential object")
    with pytest.raises(InvalidOption) as caught:
        BuildSettings(seed="9" * 200)
    assert str(caught.value).endswith("got '" + "9" * 76 + "...") and "\n" not in str(caught.value)
