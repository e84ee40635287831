"""Tests of the Spider split logic: atoms, compounds, the atom constraint, template and TMCD splits,
divergences and hardness. Every fixture is written here; expected values are worked out by hand."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from lsplits.errors import ConfigError, DataError
from lsplits.splits.engine import Partition, random_partition
from lsplits.splits.spider import (
    atom_divergence,
    compound_divergence,
    enforce_atom_constraint,
    enforce_atom_constraint_on_groups,
    missing_eval_atoms,
    normalize_question,
    query_hardness,
    spider_extras,
    spider_hardness,
    sql_atoms,
    sql_compounds,
    sql_template,
    template_partition,
    tmcd_partition,
)

# --------------------------------------------------------------------------------------------------
# Question normalisation and atoms
# --------------------------------------------------------------------------------------------------


def test_normalize_question_lowercases_and_collapses_whitespace():
    assert normalize_question("  What are  the names of\tsingers ‘Smith’? ") == "what are the names of singers ‘smith’?"


def test_atoms_of_spider_style_query_with_aliases_and_double_spaces():
    sql = "SELECT T1.Name ,  count(*) FROM Singer AS T1 JOIN concert AS T2 ON T1.id  =  T2.singer_id " \
          "WHERE T2.Year  >=  2014 GROUP  BY T1.Name;"
    assert sql_atoms(sql) == {
        "select", "t1", ".", "name", ",", "count", "(", "*", ")", "from", "singer", "as", "join",
        "concert", "t2", "on", "id", "=", "singer_id", "where", "year", ">=", "2014", "group by",
    }


def test_atoms_keep_quoted_literals_and_multiword_keywords_and_drop_semicolon():
    sql = "select name from country where continent  =  \"Asia\" and  code NOT LIKE '%a  B%' " \
          "order by age desc ;"
    assert sql_atoms(sql) == {
        "select", "name", "from", "country", "where", "continent", "=", '"asia"', "and", "code",
        "not like", "'%a b%'", "order by", "age", "desc",
    }


def test_atoms_of_empty_query_fail_clearly():
    with pytest.raises(DataError, match="empty SQL"):
        sql_atoms("  ; ")


# --------------------------------------------------------------------------------------------------
# Compounds
# --------------------------------------------------------------------------------------------------


def test_compounds_of_small_query():
    assert sql_compounds("SELECT count(*) FROM singer WHERE age  >  20") == Counter({
        "query -> select": 1, "select -> count": 1, "count -> *": 1,
        "query -> from": 1, "from -> singer": 1,
        "query -> where": 1, "where -> >": 1, "> -> age": 1, "> -> 20": 1,
    })


def test_compounds_of_join_distinct_and_order():
    sql = "SELECT DISTINCT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.aid " \
          "ORDER BY count(DISTINCT T2.x) DESC"
    assert sql_compounds(sql) == Counter({
        "query -> select distinct": 1, "select distinct -> name": 1,
        "query -> from": 1, "from -> a": 1, "from -> join": 1, "join -> b": 1, "join -> =": 1,
        "= -> id": 1, "= -> aid": 1,
        "query -> order by": 1, "order by -> desc": 1, "desc -> count": 1, "count -> distinct": 1,
        "distinct -> x": 1,
    })


def test_compounds_count_repeats_and_ignore_alias_names():
    assert sql_compounds("select a ,  a from t")["select -> a"] == 2
    assert sql_compounds("SELECT T1.name FROM singer AS T1") == sql_compounds("SELECT T2.name FROM singer AS T2")


def test_compounds_of_nested_and_set_queries():
    sql = "SELECT name FROM t WHERE x IN (SELECT y FROM u) UNION SELECT name FROM v"
    assert sql_compounds(sql) == Counter({
        "query -> select": 3, "select -> name": 2, "select -> y": 1, "query -> from": 3,
        "from -> t": 1, "from -> u": 1, "from -> v": 1, "query -> where": 1, "where -> in": 1,
        "in -> x": 1, "in -> query": 1, "query -> union": 1, "union -> query": 1,
    })


def test_compounds_of_unparsable_query_fail_clearly():
    with pytest.raises(DataError, match="cannot parse SQL"):
        sql_compounds("select from where")


# --------------------------------------------------------------------------------------------------
# The atom constraint
# --------------------------------------------------------------------------------------------------


def _naive_missing(train, eval_, atoms):
    train_atoms = set().union(*(atoms[i] for i in train))
    return set().union(*(atoms[i] for i in eval_)) - train_atoms


def test_atom_swap_follows_the_method_step_by_step():
    atoms = [{"a", "x"}, {"a", "y"}, {"a", "b"}, {"a", "b"}, {"a", "z"}, {"a", "b"}]
    partition = Partition(train=np.array([2, 4, 3, 5]), eval=np.array([0, 1]))
    # Step 1: x and y are missing. Eval is searched from its least eval-worthy end: 1 (holds y)
    # leaves; the first train example without a lone train atom is 2. Step 2: x is missing; 0 leaves
    # eval; train example 4 holds z (alone in train), so 3 goes instead.
    result = enforce_atom_constraint(partition, atoms)
    assert result.eval.tolist() == [2, 3]
    assert result.train.tolist() == [0, 1, 4, 5]  # moved examples keep their original rank


def test_atom_swap_takes_the_least_eval_worthy_eval_example_first():
    # Both eval examples hold the missing atom x; the later-ranked one (1) leaves eval, as in the
    # paper's reference code (most likely eval example first); train example 2 comes in.
    atoms = [{"a", "x"}, {"a", "x"}, {"a", "b"}, {"a", "b"}]
    result = enforce_atom_constraint(Partition(train=np.array([2, 3]), eval=np.array([0, 1])), atoms)
    assert result.eval.tolist() == [0, 2]
    assert result.train.tolist() == [1, 3]


def test_atom_swap_keeps_sizes_and_fixes_every_missing_atom_on_random_fixture():
    rng = random.Random(3)
    common = [f"c{k}" for k in range(8)]
    atoms = [set(rng.sample(common, 3)) | ({f"rare{rng.randrange(40)}"} if rng.random() < 0.3 else set())
             for _ in range(300)]
    partition = random_partition(300, 60, seed=1)
    assert _naive_missing(partition.train, partition.eval, atoms)  # the fixture starts violated
    result = enforce_atom_constraint(partition, atoms)
    assert _naive_missing(result.train, result.eval, atoms) == set()
    assert missing_eval_atoms(result, atoms) == set()
    assert result.eval.size == 60 and result.train.size == 240
    assert sorted(result.train.tolist() + result.eval.tolist()) == list(range(300))


def _naive_balance(train, eval_, atoms):
    """The atom constraint's loop written plainly: recount everything each step; swapped examples go to the back."""
    train, eval_order = list(train), list(reversed(eval_))
    while True:
        train_counts = Counter(atom for i in train for atom in atoms[i])
        missing = {atom for i in eval_order for atom in atoms[i]} - set(train_counts)
        if not missing:
            return train, eval_order
        leaving_eval = next(i for i in eval_order if atoms[i] & missing)
        leaving_train = next(i for i in train if all(train_counts[atom] >= 2 for atom in atoms[i]))
        train.remove(leaving_train)
        eval_order.remove(leaving_eval)
        train.append(leaving_eval)
        eval_order.append(leaving_train)


@pytest.mark.parametrize("seed", range(5))
def test_atom_swap_matches_a_naive_implementation(seed):
    rng = random.Random(seed)
    atoms = [set(rng.sample("abcdef", 2)) | {f"r{rng.randrange(60)}"} for _ in range(120)]  # 4-8 swaps
    partition = random_partition(120, 30, seed=seed)
    naive_train, naive_eval = _naive_balance(partition.train.tolist(), partition.eval.tolist(), atoms)
    result = enforce_atom_constraint(partition, atoms)
    assert set(result.train.tolist()) == set(naive_train)
    assert set(result.eval.tolist()) == set(naive_eval)


def test_atom_swap_leaves_a_valid_partition_untouched():
    atoms = [{"a"}, {"a", "b"}, {"b"}, {"a"}]
    partition = Partition(train=np.array([1, 3]), eval=np.array([0, 2]))
    result = enforce_atom_constraint(partition, atoms)
    assert result.train.tolist() == [1, 3] and result.eval.tolist() == [0, 2]


def test_atom_swap_fails_clearly_when_impossible():
    atoms = [{"p"}, {"q"}]  # the only train example holds an atom nobody else has
    with pytest.raises(ConfigError, match="atom constraint"):
        enforce_atom_constraint(Partition(train=np.array([0]), eval=np.array([1])), atoms)


# --------------------------------------------------------------------------------------------------
# Template split
# --------------------------------------------------------------------------------------------------


def test_template_anonymises_literals_and_alias_names_only():
    assert sql_template("SELECT name FROM singer AS T2 WHERE age > 20 AND country = 'France'") == \
        "select name from singer as alias0 where age > value and country = value"
    assert sql_template("SELECT T1.name FROM singer AS T1 WHERE T1.age  >  35") == \
        sql_template('select T2.name from singer as T2 where T2.age > 4.5;')
    assert sql_template("SELECT name FROM singer WHERE country = \"France\"") != \
        sql_template("SELECT name FROM singer WHERE city = \"France\"")


def _template_fixture():
    sizes = {"age": 3, "city": 2, "country": 2, "name": 1, "song": 1}
    sqls = [f"SELECT id FROM singer WHERE {column} = {value}"
            for column, size in sizes.items() for value in range(size)]
    return sqls, sizes


@pytest.mark.parametrize("seed", range(8))
def test_template_split_moves_whole_groups_and_hits_exact_size(seed):
    sqls, _ = _template_fixture()
    partition = template_partition(sqls, 4, seed=seed)
    assert partition.eval.size == 4 and partition.train.size == len(sqls) - 4
    assert sorted(partition.train.tolist() + partition.eval.tolist()) == list(range(len(sqls)))
    eval_templates = {sql_template(sqls[i]) for i in partition.eval}
    train_templates = {sql_template(sqls[i]) for i in partition.train}
    assert not eval_templates & train_templates


def test_template_split_is_seeded():
    sqls, _ = _template_fixture()
    first, again = template_partition(sqls, 4, seed=5), template_partition(sqls, 4, seed=5)
    assert np.array_equal(first.eval, again.eval) and np.array_equal(first.train, again.train)


# Real-style Spider queries (concert_singer / pets_1 / car_1 shapes, as in Spider dev): template groups whose
# members differ only in literals, and literals that occur once, which the atom constraint must bring to train.
_COUNTRIES = ["France", "Netherlands", "United States", "France", "Netherlands", "Chile", "Japan"]
_REAL_STYLE_SQL = [
    *[f"SELECT name FROM singer WHERE country = '{c}'" for c in _COUNTRIES],
    *[f"SELECT count(*) FROM singer WHERE age  >  {a}" for a in (20, 25, 30, 40, 32, 20, 29)],
    *[f"SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
      f"WHERE T2.concert_id = {c}" for c in (1, 2, 3, 2, 1)],
    *[f"SELECT avg(age) FROM student WHERE sex = '{x}'" for x in ("F", "M", "F")],
    *[f"SELECT count(*) FROM pets WHERE weight  >  {w} AND pettype = '{t}'" for w, t in
      ((10, "dog"), (10, "cat"), (5, "dog"), (20, "cat"), (3, "dog"))],
    *[f"SELECT model FROM car_names WHERE make != '{m}'" for m in ("amc", "ford", "amc")],
    *[f"SELECT model FROM car_names WHERE make <> '{m}'" for m in ("volvo", "ford")],
    "SELECT name, country, age FROM singer ORDER BY age DESC",
    "SELECT DISTINCT country FROM singer WHERE age  >  20",
    "SELECT song_name, song_release_year FROM singer ORDER BY age LIMIT 1",
    "SELECT count(*) FROM concert WHERE YEAR = 2014 OR YEAR = 2015",
    "SELECT name FROM stadium WHERE capacity BETWEEN 5000 AND 10000",
    "SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
    "GROUP BY T1.stadium_id",
    "SELECT max(weight), petType FROM pets GROUP BY petType",
    "SELECT stuid FROM student EXCEPT SELECT T1.stuid FROM student AS T1 JOIN has_pet AS T2 ON "
    "T1.stuid = T2.stuid",
    "SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM singer_in_concert)",
    "SELECT count(*) FROM singer WHERE age  <  30",
    "SELECT avg(capacity), max(capacity) FROM stadium",
    "SELECT name FROM singer WHERE age  >  (SELECT avg(age) FROM singer)",
    # templates over common atoms only, which eval can take without leaving train short of an atom
    "SELECT name FROM singer ORDER BY age", "SELECT country FROM singer", "SELECT count(*) FROM singer",
    "SELECT name FROM singer WHERE age  >  20 AND country = 'France'", "SELECT DISTINCT name FROM singer",
    "SELECT name, age FROM singer", "SELECT max(age) FROM singer", "SELECT min(age) FROM singer",
    "SELECT count(*) FROM pets WHERE weight  >  10", "SELECT avg(weight) FROM pets",
    "SELECT count(*) FROM singer WHERE country = 'France'", "SELECT name FROM singer ORDER BY age DESC",
    "SELECT country, count(*) FROM singer GROUP BY country", "SELECT avg(age) FROM singer",
    "SELECT model FROM car_names ORDER BY make", "SELECT count(*) FROM car_names WHERE make != 'ford'",
]


def _plain_constraint_after_template(sqls, eval_size, seed):
    """What the build did before: the template partition, then the per-example atom swaps."""
    return enforce_atom_constraint(template_partition(sqls, eval_size, seed), [sql_atoms(q) for q in sqls])


@pytest.mark.parametrize("seed", range(12))
def test_template_config_keeps_whole_templates_after_the_atom_constraint(seed):
    from lsplits.building.configs import CONFIGS
    from lsplits.splits.spider import SPIDER_POLICY

    examples = [{"id": f"dev-{i}", "question": f"q{i}", "query": q} for i, q in enumerate(_REAL_STYLE_SQL)]
    inputs = SPIDER_POLICY.inputs(examples, ids=[e["id"] for e in examples], lengths=[5] * len(examples),
                                  scores={"ft": np.random.default_rng(seed).normal(size=len(examples))})
    templates = [sql_template(q) for q in _REAL_STYLE_SQL]
    atoms = inputs.extras["atoms"]
    for name in ("template", "ll_split", "random", "length"):
        partition = SPIDER_POLICY.split(CONFIGS[name], inputs, 12, seed)
        assert partition.eval.size == 12 and not missing_eval_atoms(partition, atoms), name
        assert sorted([*partition.train.tolist(), *partition.eval.tolist()]) == list(range(len(examples)))
        if name == "template":
            assert not {templates[i] for i in partition.train} & {templates[i] for i in partition.eval}


def test_the_fixture_breaks_templates_under_per_example_swaps():
    """The per-example swaps split template groups on these queries (the bug the group constraint fixes)."""
    templates = [sql_template(q) for q in _REAL_STYLE_SQL]
    broken = 0
    for seed in range(12):
        partition = _plain_constraint_after_template(_REAL_STYLE_SQL, 12, seed)
        broken += bool({templates[i] for i in partition.train} & {templates[i] for i in partition.eval})
    assert broken >= 6


def test_the_build_refuses_a_template_partition_that_splits_a_template():
    from lsplits.errors import SplitInvariantError
    from lsplits.splits.spider import SPIDER_POLICY, TemplateSplit

    class CuttingTemplateSplit(TemplateSplit):
        def split(self, inputs, eval_size, seed=0):
            return Partition(train=np.arange(1, len(inputs.ids)), eval=np.array([0]))

    examples = [{"id": f"dev-{i}", "question": "q", "query": q} for i, q in enumerate(_REAL_STYLE_SQL)]
    inputs = SPIDER_POLICY.inputs(examples, ids=[e["id"] for e in examples], lengths=[5] * len(examples))
    with pytest.raises(SplitInvariantError, match="SQL templates are in both train and eval"):
        SPIDER_POLICY.split(CuttingTemplateSplit(), inputs, 1, 0)


def test_group_constraint_refills_eval_exactly_when_the_greedy_order_falls_short():
    # eval: group E (6 examples) holds atom "x" that train lacks; train: A (5), B (3), C (3), K (1, atom "k" alone)
    groups = ["E"] * 6 + ["A"] * 5 + ["B"] * 3 + ["C"] * 3 + ["K"]
    atoms = [{"a", "x"} if g == "E" else {"a", "k"} if g == "K" else {"a"} for g in groups]
    partition = Partition(train=np.arange(6, 18), eval=np.arange(6))
    fixed = enforce_atom_constraint_on_groups(partition, atoms, groups)
    assert sorted(groups[i] for i in fixed.eval) == ["B"] * 3 + ["C"] * 3  # greedy A (5) + nothing would leave 1
    assert not missing_eval_atoms(fixed, atoms) and fixed.eval.size == 6
    assert not {groups[i] for i in fixed.train} & {groups[i] for i in fixed.eval}
    with pytest.raises(ConfigError, match="whole template groups"):  # only A and K could refill: 5 or 6 with K
        enforce_atom_constraint_on_groups(Partition(train=np.arange(6, 12), eval=np.arange(6)), atoms[:6] +
                                          atoms[6:11] + [{"a", "k"}], groups[:11] + ["K"])


def test_not_equal_spellings_are_one_atom_and_one_template():
    assert sql_atoms("SELECT model FROM car_names WHERE make <> 'amc'") == \
        sql_atoms("SELECT model FROM car_names WHERE make != 'amc'")
    assert sql_template("SELECT model FROM car_names WHERE make <> 'amc'") == \
        sql_template("select model from car_names where make != 'ford'")
    assert sql_atoms("SELECT a FROM t WHERE x == 1") == sql_atoms("SELECT a FROM t WHERE x = 1")
    assert sql_compounds("SELECT a FROM t WHERE x <> 1") == sql_compounds("SELECT a FROM t WHERE x != 1")


def test_template_split_fails_when_whole_groups_cannot_reach_the_size():
    sqls = ["select a from t where x = 1", "select a from t where x = 2",
            "select b from t where x = 1", "select b from t where x = 2"]
    with pytest.raises(ConfigError, match="whole template"):
        template_partition(sqls, 1, seed=0)


# --------------------------------------------------------------------------------------------------
# Divergences
# --------------------------------------------------------------------------------------------------


def test_divergence_on_hand_computed_distributions():
    # Train pools {a: 3, b: 1} -> (0.75, 0.25); eval pools {a: 1, b: 1} -> (0.5, 0.5).
    atoms = [{"a", "b"}, {"a"}, {"a"}, {"a", "b"}]
    # alpha 0.5: 1 - (sqrt(0.75 * 0.5) + sqrt(0.25 * 0.5)) = 1 - (0.612372 + 0.353553)
    assert atom_divergence([0, 1, 2], [3], atoms) == pytest.approx(0.034074, abs=1e-6)
    compounds = [Counter({"a": 3, "b": 1}), Counter({"a": 1}), Counter({"a": 1, "b": 1})]
    # alpha 0.1: 1 - (0.75^0.1 * 0.5^0.9 + 0.25^0.1 * 0.5^0.9) = 1 - (0.520691 + 0.466516)
    assert compound_divergence([0], [2], compounds) == pytest.approx(0.012793, abs=1e-6)
    assert compound_divergence([1], [2], compounds) == pytest.approx(1 - 0.5 ** 0.9, abs=1e-9)


def test_divergence_limits():
    atoms = [{"a"}, {"b"}, {"a"}]
    assert atom_divergence([0], [1], atoms) == pytest.approx(1.0)
    assert atom_divergence([0], [2], atoms) == pytest.approx(0.0)
    assert math.isnan(atom_divergence([0], [], atoms))


# --------------------------------------------------------------------------------------------------
# TMCD
# --------------------------------------------------------------------------------------------------


def _naive_compound_divergence(train, eval_, compounds, alpha=0.1):
    p, q = Counter(), Counter()
    for i in train:
        p.update(compounds[i])
    for i in eval_:
        q.update(compounds[i])
    sp, sq = sum(p.values()), sum(q.values())
    return 1 - sum((p[k] / sp) ** alpha * (q[k] / sq) ** (1 - alpha) for k in p if k in q)


def _colour_shape_fixture():
    """Each example pairs a colour with a shape: atoms are the two words, the compound is the pair."""
    rng = random.Random(7)
    colours, shapes = ["red", "green", "blue", "cyan", "pink"], ["cube", "ball", "cone", "ring", "star"]
    atoms, compounds = [], []
    for _ in range(250):
        colour, shape = rng.choice(colours), rng.choice(shapes)
        atoms.append({colour, shape})
        compounds.append(Counter({f"{colour} -> {shape}": 1}))
    return atoms, compounds


def test_tmcd_raises_compound_divergence_far_above_random_and_keeps_atoms():
    atoms, compounds = _colour_shape_fixture()
    random_split = enforce_atom_constraint(random_partition(250, 50, seed=0), atoms)
    baseline = _naive_compound_divergence(random_split.train, random_split.eval, compounds)
    split = tmcd_partition(atoms, compounds, 50, seed=0)
    divergence = _naive_compound_divergence(split.train, split.eval, compounds)
    assert divergence > 0.3 and divergence > 3 * baseline
    assert divergence == pytest.approx(compound_divergence(split.train, split.eval, compounds))
    assert _naive_missing(split.train, split.eval, atoms) == set()
    assert split.eval.size == 50
    assert sorted(split.train.tolist() + split.eval.tolist()) == list(range(250))


def test_tmcd_respects_atom_divergence_bound_and_seed():
    atoms, compounds = _colour_shape_fixture()
    bounded = tmcd_partition(atoms, compounds, 50, seed=1, max_atom_divergence=0.02)
    assert atom_divergence(bounded.train, bounded.eval, atoms) <= 0.02 + 1e-9
    free = tmcd_partition(atoms, compounds, 50, seed=1)
    assert atom_divergence(free.train, free.eval, atoms) > 0.02  # the bound did bind
    again = tmcd_partition(atoms, compounds, 50, seed=1)
    assert np.array_equal(free.eval, again.eval)


def test_tmcd_rejects_mismatched_inputs():
    with pytest.raises(ConfigError, match="compound counts"):
        tmcd_partition([{"a"}, {"b"}], [Counter()], 1)


# --------------------------------------------------------------------------------------------------
# Hardness
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "level"), [
    # (component 1, component 2, others) worked out by hand from Spider's rules
    ("SELECT count(*) FROM singer", "easy"),                                          # (0, 0, 0)
    ("SELECT name ,  country ,  age FROM singer ORDER BY age DESC", "medium"),       # (1, 0, 1)
    ("SELECT name FROM singer WHERE age > 20 ORDER BY age DESC LIMIT 1", "hard"),    # (3, 0, 0)
    ("SELECT name FROM singer WHERE age  >  (SELECT avg(age) FROM singer)", "hard"),  # (1, 1, 0)
    ("SELECT a FROM t WHERE x = 1 INTERSECT SELECT a FROM t WHERE x = 2", "hard"),   # (1, 1, 0)
    ("SELECT T2.name FROM Friend AS T1 JOIN Highschooler AS T2 ON T1.student_id = T2.id "
     "GROUP BY T1.student_id ORDER BY count(*) DESC LIMIT 1", "extra"),              # (4, 0, 0)
    ("SELECT name FROM t WHERE name LIKE '%a%' OR age > 3", "hard"),                  # (3, 0, 1)
    # Spider's quirks: NOT counts as an aggregate; HAVING's connective counts, HAVING itself not.
    ("SELECT count(*) FROM t WHERE x NOT IN (SELECT y FROM u)", "extra"),            # (1, 1, 1)
    ("SELECT count(*) FROM t WHERE x IN (SELECT y FROM u)", "hard"),                 # (1, 1, 0)
    ("SELECT a FROM t GROUP BY a HAVING count(*) > 1 AND sum(b) > 2", "easy"),        # (1, 0, 0)
    ("SELECT max(a) ,  min(a) FROM t", "medium"),                                     # (0, 0, 2)
])
def test_hardness_of_hand_classified_queries(sql, level):
    assert spider_hardness(sql) == level


def test_hardness_from_spiders_parsed_form():
    # Spider's parse of "SELECT count(*) FROM singer" and of a hand-built query
    # "SELECT a, b FROM t1 JOIN t2 ON ... WHERE x LIKE 'v' OR y = 1": (join 1 + where 1 + or 1 + like 1, 0, 2)
    count_all = {"from": {"table_units": [["table_unit", 1]], "conds": []},
                 "select": [False, [[3, [0, [0, 0, False], None]]]], "where": [], "groupBy": [], "having": [],
                 "orderBy": [], "limit": None, "intersect": None, "union": None, "except": None}
    assert spider_hardness(count_all) == "easy"
    cond_like = [False, 9, [0, [0, 3, False], None], "'v'", None]
    cond_eq = [False, 2, [0, [0, 4, False], None], 1, None]
    joined = dict(count_all, select=[False, [[0, [0, [0, 1, False], None]], [0, [0, [0, 2, False], None]]]],
                  where=[cond_like, "or", cond_eq],
                  **{"from": {"table_units": [["table_unit", 0], ["table_unit", 1]],
                              "conds": [[False, 2, [0, [0, 5, False], None], [0, 6, False], None]]}})
    assert spider_hardness(joined) == "extra"


# --------------------------------------------------------------------------------------------------
# An unparsable query in a build
# --------------------------------------------------------------------------------------------------

# A truncated query: sqlparse still cuts it into atoms, the tree parser cannot read it. "zodiac" is
# its own atom, so the atom constraint must keep it in train.
UNPARSABLE_SQL = "SELECT name FROM singer WHERE zodiac >"
TINY_SPIDER_SQL = [
    "SELECT count(*) FROM singer",
    "SELECT name FROM singer WHERE age  >  20",
    "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id",
    "SELECT avg(age) FROM singer",
    "SELECT name ,  country FROM singer ORDER BY age DESC",
    "SELECT T2.name FROM concert AS T1 JOIN singer AS T2 ON T2.id = T1.singer_id GROUP BY T1.singer_id "
    "ORDER BY count(*)  >=  5",
]


def _tiny_spider(n: int) -> list[dict]:
    rows = [{"db_id": "concert_singer", "query": TINY_SPIDER_SQL[i % len(TINY_SPIDER_SQL)],
             "question": f"How many singers are {['old', 'young', 'French', 'tall'][i % 4]} number {i}?"}
            for i in range(n)]
    rows[7]["query"] = UNPARSABLE_SQL
    return rows


def test_spider_extras_fall_back_for_an_unparsable_query(caplog):
    examples = [{"id": f"train-{i}", **row} for i, row in enumerate(_tiny_spider(10))]
    with caplog.at_level("WARNING"):
        extras = spider_extras(examples)
    assert extras["unparsable"] == ["train-7"]
    assert extras["compounds"][7] == Counter()
    assert extras["atoms"][7] == {"select", "name", "from", "singer", "where", "zodiac", ">"}
    assert extras["compounds"][5]["order by -> >="] == 1  # the real train_spider query parses
    assert "train-7" in caplog.text and "1 of 10 queries could not be parsed" in caplog.text
    assert query_hardness(examples[7]) == "unknown"
    assert query_hardness(examples[5]) == "hard"


def test_an_unparsable_query_does_not_abort_the_spider_build(tmp_path, caplog):
    import json

    import datasets

    from lsplits.cli.parser import main

    data = tmp_path / "train_spider.json"
    data.write_text(json.dumps(_tiny_spider(30)), encoding="utf-8")
    out = tmp_path / "spider-likelihood"
    configs = ["random", "template", "tmcd"]
    with caplog.at_level("INFO"):
        code = main(["build", "spider", "--data-files", str(data), "--lm", "scratch", "--out", str(out),
                     "--max-steps", "1", "--folds", "2", "--eval-size", "10", "--cache-dir", str(tmp_path / "cache"),
                     "--no-progress", "--configs", *configs])
    assert code == 0
    assert "SQL parser: 1 of 30 queries could not be parsed" in caplog.text and "train-7" in caplog.text
    for config in configs:
        ds = datasets.load_dataset(str(out), config)
        rows = {split: ds[split].to_list() for split in ("train", "validation", "test")}
        by_id = {row["id"]: (split, row) for split, part in rows.items() for row in part}
        assert len(by_id) == 30
        split, row = by_id["train-7"]
        assert split == "train", config  # its atom "zodiac" counts for the atom constraint
        assert row["hardness"] == "unknown"
        assert {r["hardness"] for i, (_, r) in by_id.items() if i != "train-7"} <= {"easy", "medium", "hard", "extra"}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "- unparsable SQL queries: 1 (train-7)" in card
    assert "hardness=unknown" in card
    meta = json.loads((out / "lsplits.json").read_text(encoding="utf-8"))
    assert meta["notes"] == {"unparsable SQL queries": ["train-7"]}


# --------------------------------------------------------------------------------------------------
# The Spider policy and strategies, without the builder
# --------------------------------------------------------------------------------------------------


def _spider_inputs(n: int = 30):
    from lsplits.splits.spider import SPIDER_POLICY

    examples = [{"id": f"train-{i}", **row} for i, row in enumerate(_tiny_spider(n))]
    return SPIDER_POLICY, SPIDER_POLICY.inputs(examples, ids=[e["id"] for e in examples],
                                               lengths=[len(e["question"].split()) for e in examples])


def test_spider_policy_puts_every_strategy_through_the_atom_constraint():
    from lsplits.splits.spider import TemplateSplit, TMCDSplit

    policy, inputs = _spider_inputs()
    atoms = inputs.extras["atoms"]
    template = policy.split(TemplateSplit(), inputs, 10, seed=1)  # the template config moves whole groups
    expected = enforce_atom_constraint_on_groups(template_partition(inputs.extras["sqls"], 10, seed=1), atoms,
                                                 [sql_template(q) for q in inputs.extras["sqls"]])
    assert np.array_equal(template.eval, expected.eval) and np.array_equal(template.train, expected.train)
    assert _naive_missing(template.train, template.eval, atoms) == set()
    start = policy.split(TMCDSplit(max_swaps=0), inputs, 10, seed=2)  # no swap: the constrained random start
    random_start = enforce_atom_constraint(random_partition(30, 10, seed=2), atoms)
    assert sorted(start.eval.tolist()) == sorted(random_start.eval.tolist())
    assert TMCDSplit(max_swaps=0).params() == {"max_swaps": 0, "max_atom_divergence": None, "candidates_per_swap": 16}


def test_spider_policy_statistics_and_notes():
    from lsplits.splits.spider import TemplateSplit

    policy, inputs = _spider_inputs()
    partition = policy.split(TemplateSplit(), inputs, 10, seed=1)
    stats = policy.statistics_of(inputs, {"template": partition})
    assert stats["template"]["atom divergence"] == pytest.approx(
        atom_divergence(partition.train, partition.eval, inputs.extras["atoms"]))
    assert stats["template"]["compound divergence"] == pytest.approx(
        compound_divergence(partition.train, partition.eval, inputs.extras["compounds"]))
    assert policy.notes_of(inputs) == {"unparsable SQL queries": ["train-7"]}


@pytest.mark.process
def test_a_library_user_builds_a_spider_split_without_the_builders():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from lsplits.building.configs import CONFIGS\n"
        "from lsplits.splits.spider import SPIDER_POLICY\n"
        f"rows = {_tiny_spider(30)!r}\n"
        "examples = [{'id': f'train-{i}', **row} for i, row in enumerate(rows)]\n"
        "inputs = SPIDER_POLICY.inputs(examples, ids=[e['id'] for e in examples], lengths=[1] * 30)\n"
        "partition = SPIDER_POLICY.split(CONFIGS['template'], inputs, eval_size=10, seed=1)\n"
        "print(sorted(partition.eval.tolist()), 'lsplits.builders' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    _, inputs = _spider_inputs()
    expected = enforce_atom_constraint_on_groups(template_partition(inputs.extras["sqls"], 10, seed=1),
                                                 inputs.extras["atoms"], [sql_template(q) for q in inputs.extras["sqls"]])
    assert result.stdout.split("] ")[1].strip() == "False"
    assert result.stdout.split("] ")[0] + "]" == str(sorted(expected.eval.tolist()))


# --------------------------------------------------------------------------------------------------
# What the atom constraint did, on data too small for it (issue 38 item 2)
# --------------------------------------------------------------------------------------------------

COMMON_SQL = ["SELECT name FROM singer", "SELECT count(*) FROM singer", "SELECT name FROM singer WHERE age > 20",
              "SELECT avg(age) FROM singer"]
RARE = 12  # examples rare-0..rare-11: each names a table no other example names (an atom only it holds)
COMMON = 24


def _small_spider():
    """36 Spider-like examples scored by hand: the 12 least likely each hold an atom of their own (so none of them
    can stay in eval), the 24 others share every atom six times over. Scores: rare k -100-k, common j -50+j."""
    from lsplits.splits.spider import SPIDER_POLICY

    rows = ([{"id": f"rare-{k}", "db_id": "stadiums", "question": f"Which stadium is number {k}?",
              "query": f"SELECT name FROM stadium_{k}"} for k in range(RARE)]
            + [{"id": f"common-{j}", "db_id": "concert_singer", "question": f"How many singers? ({j})",
                "query": COMMON_SQL[j % 4]} for j in range(COMMON)])
    scores = np.concatenate([-100.0 - np.arange(RARE), -50.0 + np.arange(COMMON)])
    return SPIDER_POLICY, rows, scores


def test_the_constraint_effect_counts_swaps_kept_choices_and_a_turned_direction(caplog):
    from lsplits.building.pipeline import split_scored
    from lsplits.data.tasks import spider_task

    policy, rows, scores = _small_spider()
    with caplog.at_level("INFO"):
        result = split_scored(spider_task(), rows, {"ft": (scores, np.full(36, 5))},
                              configs=["ll_split", "ll_split_reverse", "random"], eval_size=RARE, policy=policy)
    ll_split = result.constraint_effects["ll_split"]
    # every rare example leaves eval; the 12 least likely common examples (common-0..11) take their places
    assert sorted(result.table["id"][result.configs["ll_split"].partition.eval]) == sorted(
        f"common-{j}" for j in range(12))
    assert (ll_split.eval_examples, ll_split.swaps, ll_split.kept) == (12, 12, 0)
    assert ll_split.eval_mean_before == pytest.approx(-105.5)  # mean of -100..-111
    assert ll_split.eval_mean == pytest.approx(-44.5)  # mean of -50..-39
    assert ll_split.train_mean == pytest.approx((-105.5 - 32.5) / 2)  # the rare 12 and common-12..23 (-38..-27)
    assert ll_split.turned
    reverse = result.constraint_effects["ll_split_reverse"]  # the most likely 12 are common: nothing to swap
    assert (reverse.swaps, reverse.kept, reverse.turned) == (0, 12, False)
    random = result.constraint_effects["random"]
    assert random.reverse is None and not random.turned  # not a likelihood config: no direction to turn
    # but its means are reported: the constraint pushed every rare (unlikely) example out of its eval, so eval is
    # likelier than train, the bias the card and analyze must show
    partition = result.configs["random"].partition
    assert random.eval_mean == pytest.approx(scores[partition.eval].mean())
    assert random.train_mean == pytest.approx(scores[partition.train].mean())
    assert random.eval_mean > random.train_mean and "mean ll_score eval" in random.describe()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    lines = [w for w in warnings if w.startswith("config ll_split:")]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "12 of 12 eval examples swapped for train examples (100%); 0 of the config's own eval choices kept" in lines[0]
    assert "eval is now more likely than train" in lines[0] and "more than 25% of eval replaced" in lines[0]
    assert not [w for w in warnings if w.startswith("config ll_split_reverse:")]
    # every log line about swaps names its config (a constraint that swapped under the warning share is info)
    swap_lines = [r.getMessage() for r in caplog.records if "swap" in r.getMessage()]
    assert swap_lines and all(line.startswith(("config ll_split:", "config random:")) for line in swap_lines)
    if random.swaps:
        assert sum(line.startswith("config random:") for line in swap_lines) == 1


def test_the_warning_threshold_and_the_direction_of_a_reverse_config():
    from lsplits.splits.strategy import CONSTRAINT_WARN_SHARE, ConstraintEffect

    assert CONSTRAINT_WARN_SHARE == 0.25
    assert ConstraintEffect("c", eval_examples=12, swaps=3).warning("x") is None  # 25%: not more than the share
    assert "more than 25% of eval replaced" in ConstraintEffect("c", eval_examples=12, swaps=4).warning("x")
    turned = ConstraintEffect("c", eval_examples=100, swaps=1, reverse=True, eval_mean_before=-10.0, eval_mean=-30.0,
                              train_mean=-20.0)  # a reverse split whose eval ended less likely than train
    assert turned.turned and "the split's direction turned around" in turned.warning("x")
    assert "more than 25%" not in turned.warning("x")
    assert "eval is now less likely than train" in turned.describe()
    held = ConstraintEffect("c", eval_examples=100, swaps=1, reverse=False, eval_mean_before=-40.0, eval_mean=-30.0,
                            train_mean=-20.0)
    assert not held.turned and held.warning("x") is None
    assert ConstraintEffect.from_dict(turned.to_dict()) == turned


def test_the_card_lsplits_json_and_analyze_report_the_constraint(tmp_path):
    from lsplits.building.card import CardInfo
    from lsplits.building.pipeline import DatasetSpec, export_dataset, split_scored
    from lsplits.building.record import BuildRecord
    from lsplits.building.report import analyze_folder
    from lsplits.building.settings import BuildSettings
    from lsplits.data.tasks import spider_task

    policy, rows, scores = _small_spider()
    result = split_scored(spider_task(), rows, {"ft": (scores, np.full(36, 5))}, configs=["ll_split", "random"],
                          eval_size=RARE, policy=policy)
    spec = DatasetSpec(task=spider_task(), card=CardInfo(pretty_name="Small Spider"), policy=policy)
    out = export_dataset(spec, result, tmp_path / "small", BuildSettings(lm="scratch"), repo_hint="org/small")
    record = BuildRecord.of_folder(out)
    assert record.constraint_effects["ll_split"]["swaps"] == 12
    assert record.constraint_effects["ll_split"]["eval_mean"] == pytest.approx(-44.5)
    assert set(record.constraint_effects) == {"ll_split", "random"}
    expected = ("- `ll_split`: atom constraint (every SQL atom of eval occurs in train): 12 of 12 eval examples "
                "swapped for train examples (100%); 0 of the config's own eval choices kept; mean ll_score eval -44.50 "
                "(before the constraint -105.50), train -69.00: eval is now more likely than train, the split's direction "
                "turned around -- more than 25% of eval replaced, so eval is no longer the config's choice")
    assert expected in (out / "README.md").read_text(encoding="utf-8")
    text = analyze_folder(out)
    assert expected[2:].replace("`", "") in text


def test_the_template_configs_swaps_count_against_the_groups_it_drew():
    """The template split applies the atom constraint to whole groups itself: its swaps count against the groups
    template_partition drew, not against the constrained partition (which would always show 0)."""
    from lsplits.splits.spider import TemplateSplit

    policy, rows, scores = _small_spider()  # 6 in eval: the one common group free to go refills it
    inputs = policy.inputs(rows, ids=[r["id"] for r in rows], lengths=[5] * 36, scores={"ft": scores})
    for seed in range(3):
        drawn = template_partition(inputs.extras["sqls"], 6, seed=seed)
        partition, effect = policy.split_with_effect(TemplateSplit(), inputs, 6, seed=seed)
        rare_drawn = sum(rows[i]["id"].startswith("rare-") for i in drawn.eval.tolist())
        assert rare_drawn > 0, seed  # the draw holds examples whose atom only they hold: they must leave eval
        assert effect.swaps == 6 - np.intersect1d(drawn.eval, partition.eval).size >= rare_drawn
