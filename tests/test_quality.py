"""Quality of predictions against references: invalid predictions, corpus scores, invalid references."""

from __future__ import annotations

import pytest

from lsplits.errors import DataError
from lsplits.similarity.registry import get
from lsplits.uncertainty.quality import AMR_PLACEHOLDER, placeholder_for, score_predictions

WANT = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"


def test_invalid_prediction_scores_as_the_empty_graph():
    result = score_predictions("smatchpp", [WANT, "(w / want-01"], [WANT, "(d / dog)"], placeholder=AMR_PLACEHOLDER)
    assert result.scores == [1.0, 0.0]
    assert result.invalid_predictions == [1]
    # micro average: 7 of 7 triples, then the placeholder's 2 against the dog's 2, none matched: 7/9 each way
    assert result.corpus == pytest.approx(7 / 9)


def test_without_placeholder_invalid_predictions_leave_the_corpus_score():
    result = score_predictions("smatchpp", [WANT, "(w / want-01"], [WANT, "(d / dog)"])
    assert result.scores == [1.0, 0.0]
    assert result.corpus == 1.0


def test_mean_when_the_metric_has_no_corpus_score():
    result = score_predictions("rougel", ["a b c", "x"], ["a b c", "y"])
    assert result.scores == [1.0, 0.0] and result.corpus == 0.5


def test_invalid_references_are_listed_by_id():
    with pytest.raises(DataError, match=r"2 reference\(s\) cannot be read by 'smatchpp': s1: .*; s3: "):
        score_predictions("smatchpp", [WANT] * 3, ["(a / b", WANT, "nonsense"], ids=["s1", "s2", "s3"])


def test_placeholder_only_for_amr_metrics():
    assert placeholder_for(get("smatchpp")) == AMR_PLACEHOLDER
    assert placeholder_for(get("rougel")) is None
