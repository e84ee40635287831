"""The Spider atom constraint: every SQL atom that occurs in eval must occur in train.

Applied to every Spider partition (likelihood, random, length) after the engine cuts it, and inside
:func:`~lsplits.splits.tmcd.tmcd_partition`. The template split moves whole template groups instead
(:func:`enforce_atom_constraint_on_groups`), so that no template ends up on both sides. Atoms come
from :func:`~lsplits.splits.sql.sql_atoms`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection, Hashable, Sequence

import numpy as np

from lsplits.errors import ConfigError, SplitInvariantError
from lsplits.splits.engine import Partition

__all__ = ["enforce_atom_constraint", "enforce_atom_constraint_on_groups", "groups_on_both_sides",
           "missing_eval_atoms"]

logger = logging.getLogger(__name__)


def missing_eval_atoms(partition: Partition, atoms_per_example: Sequence[Collection[str]]) -> set[str]:
    """The atoms that occur in some eval example but in no train example (empty when the constraint holds)."""
    train_atoms: set[str] = set()
    for index in partition.train.tolist():
        train_atoms.update(atoms_per_example[index])
    eval_atoms: set[str] = set()
    for index in partition.eval.tolist():
        eval_atoms.update(atoms_per_example[index])
    return eval_atoms - train_atoms


def enforce_atom_constraint(partition: Partition,
                            atoms_per_example: Sequence[Collection[str]]) -> Partition:
    """Swap examples until every atom that occurs in eval also occurs in train.

    Each swap exchanges one eval example that holds a missing atom with the first train example,
    in rank order (most eval-worthy, e.g. least likely, first), none of whose atoms is held by
    at most one train example; sizes never change. Shaw et al.'s ``balance_atoms``, which the
    paper runs, is followed in two details the paper's wording leaves open:

    - eval is searched from its *least* eval-worthy end (for likelihood splits: the most likely
      eval example leaves first), as the paper's reference code orders its eval list;
    - a swapped example joins the back of its new side's search order, so it is tried last.

    Every swap makes the missing atoms strictly fewer (the example leaving eval brings at least
    one to train, the one entering eval takes none away), so the loop ends after at most as many
    swaps as atoms were missing. It fails, with :class:`ConfigError`, only when no train example
    can leave without orphaning an atom.

    The result lists both sides in the input's rank order (the order of ``eval`` then
    ``train``): an example that moved to train comes before every original train example
    (it was ranked more eval-worthy than all of them), one that moved to eval after every
    original eval example.
    """
    ranked = np.concatenate([partition.eval, partition.train])
    if ranked.size and (ranked.min() < 0 or ranked.max() >= len(atoms_per_example)):
        raise ConfigError(f"the partition indexes examples outside the {len(atoms_per_example)} atom sets")
    example_atoms = {index: atoms_per_example[index] for index in ranked.tolist()}
    train_count: dict[str, int] = {}
    for index in partition.train.tolist():
        for atom in example_atoms[index]:
            train_count[atom] = train_count.get(atom, 0) + 1
    eval_holders: dict[str, set[int]] = {}
    for index in partition.eval.tolist():
        for atom in example_atoms[index]:
            eval_holders.setdefault(atom, set()).add(index)
    missing = {atom for atom in eval_holders if atom not in train_count}
    if not missing:
        return partition
    initially_missing = len(missing)

    # Search orders; a moved example is appended with a fresh, larger search key.
    train_order = partition.train.tolist()
    train_key = {index: key for key, index in enumerate(train_order)}
    eval_key = {index: key for key, index in enumerate(reversed(partition.eval.tolist()))}
    next_key = len(ranked)
    scan_start = 0
    swaps = 0
    while missing:
        leaving_eval = min((holder for atom in missing for holder in eval_holders[atom]),
                           key=eval_key.__getitem__)
        leaving_train, scan_start = _first_removable(train_order, train_key, train_count, example_atoms, scan_start)
        if leaving_train is None:
            raise ConfigError(
                f"cannot satisfy the Spider atom constraint with {partition.eval.size} eval examples: "
                f"{len(missing)} eval atoms are missing from train (e.g. {sorted(missing)[:5]}) and every "
                f"train example holds an atom no other train example has; use a smaller eval size"
            )
        # Move leaving_eval to the back of train's search order, leaving_train to the back of eval's.
        del eval_key[leaving_eval]
        del train_key[leaving_train]
        train_order.append(leaving_eval)
        train_key[leaving_eval] = len(train_order) - 1
        eval_key[leaving_train] = next_key
        next_key += 1
        for atom in example_atoms[leaving_eval]:
            train_count[atom] = train_count.get(atom, 0) + 1
            eval_holders[atom].discard(leaving_eval)
            missing.discard(atom)
        for atom in example_atoms[leaving_train]:
            train_count[atom] -= 1
            eval_holders.setdefault(atom, set()).add(leaving_train)
        swaps += 1
    logger.debug("atom constraint: %d swaps resolved %d missing eval atoms", swaps, initially_missing)
    return _in_rank_order(ranked, train_key, eval_key)


def _first_removable(train_order: list[int], train_key: dict[int, int], train_count: dict[str, int],
                     example_atoms: dict[int, Collection[str]], scan_start: int) -> tuple[int | None, int]:
    """The first train example, in search order from ``scan_start``, none of whose atoms only it holds in train
    (None when there is none), and where the next search may start (stale entries at the front are skipped)."""
    for position in range(scan_start, len(train_order)):
        candidate = train_order[position]
        if train_key.get(candidate) != position:
            if position == scan_start:
                scan_start += 1  # stale entry at the front: never look at it again
            continue
        if all(train_count[atom] >= 2 for atom in example_atoms[candidate]):
            return candidate, scan_start
    return None, scan_start


def _in_rank_order(ranked: np.ndarray, train: Collection[int], eval_: Collection[int]) -> Partition:
    """The partition of these train and eval examples, each side in the order of ``ranked`` (eval then train)."""
    rank = np.empty(int(ranked.max()) + 1, dtype=np.int64)
    rank[ranked] = np.arange(ranked.size)
    new_train = np.fromiter(train, dtype=np.int64, count=len(train))
    new_eval = np.fromiter(eval_, dtype=np.int64, count=len(eval_))
    return Partition(train=new_train[np.argsort(rank[new_train], kind="stable")],
                     eval=new_eval[np.argsort(rank[new_eval], kind="stable")])


def groups_on_both_sides(partition: Partition, group_of: Sequence[Hashable]) -> set[Hashable]:
    """The groups (e.g. SQL templates) that have members in both train and eval (empty when none is split)."""
    return {group_of[i] for i in partition.train.tolist()} & {group_of[i] for i in partition.eval.tolist()}


def enforce_atom_constraint_on_groups(partition: Partition, atoms_per_example: Sequence[Collection[str]],
                                      group_of: Sequence[Hashable]) -> Partition:
    """The atom constraint for a partition of whole groups (the template split): groups move, never examples.

    Eval groups that hold atoms missing from train move to train as a whole, one at a time, the one holding
    the most missing atoms first (ties: the last drawn), until none is missing; then train groups refill eval to its size,
    in train's order, each only when it fits the room left and takes no atom away from train (every atom it
    holds stays held by another train example). So the missing atoms are all resolved, eval keeps its size,
    and no group is ever cut. ConfigError when the refill cannot reach the size; SplitInvariantError when
    ``partition`` already cuts a group.

    Both sides keep their input order, with moved groups at the back of their new side.
    """
    if groups_on_both_sides(partition, group_of):
        raise SplitInvariantError("the partition already splits a group; the group atom constraint needs whole groups")
    if not missing_eval_atoms(partition, atoms_per_example):
        return partition
    members: dict[Hashable, list[int]] = {}
    for index in [*partition.eval.tolist(), *partition.train.tolist()]:
        members.setdefault(group_of[index], []).append(index)
    group_atoms = {key: Counter(atom for i in indices for atom in atoms_per_example[i])
                   for key, indices in members.items()}
    eval_groups = list(dict.fromkeys(group_of[i] for i in partition.eval.tolist()))
    train_groups = list(dict.fromkeys(group_of[i] for i in partition.train.tolist()))
    train_count: Counter[str] = Counter()
    for key in train_groups:
        train_count.update(group_atoms[key])
    leaving: list[Hashable] = []
    while True:  # move out the eval group holding the most missing atoms (ties: the last drawn), one at a time
        held = {key: sum(train_count[atom] == 0 for atom in group_atoms[key]) for key in eval_groups}
        most = max(held.values(), default=0)
        if not most:
            break
        key = next(key for key in reversed(eval_groups) if held[key] == most)
        eval_groups.remove(key)
        leaving.append(key)
        train_count.update(group_atoms[key])
    room = partition.eval.size - sum(len(members[key]) for key in eval_groups)
    sizes = {key: len(indices) for key, indices in members.items()}
    entering = _refill(train_groups, sizes, group_atoms, train_count, room)  # leavers are no candidates:
    if entering is None:  # each holds an atom that only it brings to train
        raise ConfigError(
            f"cannot satisfy the Spider atom constraint with whole template groups: after moving {len(leaving)} "
            f"eval groups that hold atoms missing from train, no choice of train groups that takes no atom away "
            f"from train refills eval to {partition.eval.size} examples ({room} to fill); try another seed or "
            "eval size")
    logger.info("atom constraint on whole groups: %d groups (%d examples) left eval, %d groups entered",
                len(leaving), sum(len(members[key]) for key in leaving), len(entering))
    entered = set(entering)
    new_eval = [i for key in [*eval_groups, *entering] for i in members[key]]
    new_train = [i for key in [*train_groups, *leaving] if key not in entered for i in members[key]]
    return Partition(train=np.asarray(new_train, dtype=np.int64), eval=np.asarray(new_eval, dtype=np.int64))


def _refill(candidates: Sequence[Hashable], sizes: dict[Hashable, int], group_atoms: dict[Hashable, Counter[str]],
            train_count: Counter[str], room: int) -> list[Hashable] | None:
    """Train groups (in ``candidates`` order) whose sizes sum to ``room`` and whose move to eval leaves every
    atom held in train; ``train_count`` is updated for them. None when none is found.

    Greedy first (the first group that fits and is free to go, in order); when that falls short, a subset of
    exactly ``room`` examples among the groups free to go (earliest first, by subset sum), taken one by one
    with the check repeated, since two groups may share an atom that only they hold in train.
    """
    def free(key: Hashable) -> bool:
        return all(train_count[atom] > count for atom, count in group_atoms[key].items())

    def take(keys: Sequence[Hashable], budget: int) -> tuple[list[Hashable], int]:
        taken = []
        for key in keys:
            if budget == 0:
                break
            if sizes[key] <= budget and free(key):
                train_count.subtract(group_atoms[key])
                taken.append(key)
                budget -= sizes[key]
        return taken, budget

    def undo(keys: Sequence[Hashable]) -> None:
        for key in keys:
            train_count.update(group_atoms[key])

    taken, left = take(candidates, room)
    if left == 0:
        return taken
    undo(taken)
    excluded: set[Hashable] = set()
    for _ in range(len(candidates)):
        pool = [key for key in candidates if key not in excluded and sizes[key] <= room and free(key)]
        chosen = _subset_of_size(pool, sizes, room)
        if chosen is None:
            return None
        taken = []
        for key in chosen:
            if not free(key):  # a group taken before it holds the last train copy of one of its atoms
                excluded.add(key)
                break
            train_count.subtract(group_atoms[key])
            taken.append(key)
        else:
            return taken
        undo(taken)
    return None


def _subset_of_size(keys: Sequence[Hashable], sizes: dict[Hashable, int], total: int) -> list[Hashable] | None:
    """Some of ``keys`` whose sizes sum to exactly ``total`` (the earliest keys preferred), or None."""
    reach: list[list[int] | None] = [None] * (total + 1)
    reach[0] = []
    for position, key in enumerate(keys):
        size = sizes[key]
        for reached in range(total - size, -1, -1):
            if reach[reached] is not None and reach[reached + size] is None:
                reach[reached + size] = [*reach[reached], position]  # type: ignore[misc]
        if reach[total] is not None:
            return [keys[position] for position in reach[total]]
    return None
