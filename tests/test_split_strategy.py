"""Split strategies (lsplits.splits.strategy): parameters on the object, splits equal to the engine's,
inputs checked by name, and a policy's constraint applied to every partition."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from lsplits.errors import ConfigError
from lsplits.splits import strategy as strategy_module
from lsplits.splits.engine import Partition, length_partition, likelihood_partition, random_partition
from lsplits.splits.strategy import (
    PLAIN_POLICY,
    LengthSplit,
    LikelihoodSplit,
    RandomSplit,
    SplitInputs,
    SplitPolicy,
    SplitStrategy,
)


def inputs(n: int = 30, *, labels: bool = True) -> SplitInputs:
    rng = np.random.default_rng(7)
    return SplitInputs(ids=[f"ex-{i}" for i in range(n)], lengths=rng.integers(1, 6, n),
                       labels=np.array(["a", "b", "c"])[np.arange(n) % 3] if labels else None,
                       scores={"ft": rng.normal(-20, 5, n), "pt": rng.normal(-30, 5, n)})


def same(one: Partition, other: Partition) -> bool:
    return np.array_equal(one.train, other.train) and np.array_equal(one.eval, other.eval)


@pytest.mark.parametrize("seed", [0, 3])
def test_each_strategy_gives_the_engine_partition_of_its_parameters(seed):
    data = inputs()
    for kind in ("ft", "pt"):
        for length_control in (False, True):
            for reverse in (False, True):
                expected = likelihood_partition(data.scores[kind], 9, labels=data.labels, reverse=reverse, seed=seed,
                                                lengths=data.lengths if length_control else None)
                made = LikelihoodSplit(kind, length_control=length_control, reverse=reverse).split(data, 9, seed)
                assert same(made, expected), (kind, length_control, reverse)
    assert same(RandomSplit().split(data, 9, seed), random_partition(30, 9, labels=data.labels, seed=seed))
    assert same(LengthSplit().split(data, 9, seed), length_partition(data.lengths, 9, labels=data.labels))


def test_unlabelled_inputs_are_not_label_balanced():
    data = inputs(labels=False)
    partition = LikelihoodSplit().split(data, 6)
    assert sorted(partition.eval.tolist()) == sorted(np.argsort(data.scores["ft"], kind="stable")[:6].tolist())


def test_parameters_repr_record_and_setting():
    split = LikelihoodSplit("pt", length_control=True)
    assert repr(split) == "LikelihoodSplit(setting='pt', length_control=True, reverse=False)"
    assert split.params() == {"setting": "pt", "length_control": True, "reverse": False}
    assert split.record() == {"strategy": "LikelihoodSplit", "params": split.params()}
    assert (split.setting, RandomSplit().setting, LengthSplit().setting) == ("pt", None, None)
    assert RandomSplit().params() == {} and repr(LengthSplit()) == "LengthSplit()"
    assert LikelihoodSplit() == LikelihoodSplit("ft") != LikelihoodSplit("ft", reverse=True)
    assert "most likely" in LikelihoodSplit(reverse=True).description
    assert "query-length bucket" in LikelihoodSplit(length_control=True).description
    assert "frozen pretrained" in split.description
    with pytest.raises(ConfigError, match=r"^LikelihoodSplit setting must be 'ft' \(k-fold fine-tuned LM\) or 'pt' \(frozen pretrained LM with a prompt\), got 'xx'$"):
        LikelihoodSplit("xx")  # type: ignore[arg-type]


def test_missing_scores_and_inputs_are_named():
    data = inputs()
    del data.scores["pt"]
    with pytest.raises(ConfigError, match="no 'pt' scores were computed"):
        LikelihoodSplit("pt").split(data, 5)
    with pytest.raises(ConfigError, match=r"RandomSplit\(\) needs the per-example input 'sqls'.*has: none"):
        data.extra("sqls", RandomSplit())


def test_a_policy_applies_its_constraint_to_every_strategy_and_computes_extras():
    seen = []

    def swap_first(partition: Partition, given: SplitInputs) -> Partition:  # a real constraint: fixed sizes
        seen.append(given.extras["double"][:2])
        train, evals = partition.train.copy(), partition.eval.copy()
        train[0], evals[0] = evals[0], train[0]
        return Partition(train=train, eval=evals)

    policy = SplitPolicy(name="toy", provides=frozenset({"double"}),
                         extras=lambda examples: {"double": [2 * e["x"] for e in examples]}, constraint=swap_first)
    examples = [{"x": i} for i in range(30)]
    data = policy.inputs(examples, ids=[str(i) for i in range(30)], lengths=[1] * 30, labels=None,
                         scores={"ft": -np.arange(30.0)})
    assert data.extras == {"double": list(range(0, 60, 2))} and data.labels is None
    for strategy in (LikelihoodSplit(), RandomSplit(), LengthSplit()):
        plain = PLAIN_POLICY.split(strategy, data, 5)
        constrained = policy.split(strategy, data, 5)
        assert constrained.eval[0] == plain.train[0] and constrained.train[0] == plain.eval[0]
    assert seen == [[0, 2]] * 3
    assert policy.statistics_of(data, {}) == {} and policy.notes_of(data) == {}


def test_a_policy_supports_the_strategies_whose_inputs_it_provides():
    class NeedsSql(RandomSplit):
        requires = ("sqls",)

    assert PLAIN_POLICY.supports(RandomSplit()) and not PLAIN_POLICY.supports(NeedsSql())
    assert SplitPolicy(provides=frozenset({"sqls", "atoms"})).supports(NeedsSql())
    assert issubclass(NeedsSql, SplitStrategy)


def test_module_examples():
    assert doctest.testmod(strategy_module).failed == 0
