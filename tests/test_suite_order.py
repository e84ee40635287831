"""The suite's own ordering (tests/conftest.py): under ``--dist worksteal`` the minutes-long tests are each the
first test pytest-xdist's real scheduler sends to a worker, on different workers, so they run side by side."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import LONGEST, _longest_first
from xdist.scheduler.worksteal import WorkStealingScheduling


class _Node:
    """A worker as the scheduler sees it: what it was sent, in order."""

    shutting_down = False

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []

    def send_runtest_some(self, indices) -> None:
        self.sent += list(indices)


@pytest.mark.parametrize(("n", "workers"), [(40, 2), (41, 3), (9, 4), (300, 16)])
def test_the_longest_tests_are_the_first_ones_two_workers_get(n, workers):
    ids = [f"tests/test_a.py::test_{i}" for i in range(n - len(LONGEST))]
    ids[n // 3:n // 3] = [LONGEST[1]]  # in the middle and at the end, as collection might leave them
    ids.append(LONGEST[0])
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in ids]
    ordered = [item.nodeid for item in _longest_first(items, workers)]
    assert sorted(ordered) == sorted(ids)  # nothing dropped, nothing doubled

    scheduler = WorkStealingScheduling(SimpleNamespace(getvalue=lambda name: [f"{workers}*popen"]))
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, ordered)
    scheduler.schedule()
    firsts = [ordered[node.sent[0]] for node in nodes if node.sent]
    assert sorted(LONGEST) == sorted(set(firsts) & set(LONGEST))


def test_without_the_longest_tests_the_order_is_kept():
    items = [SimpleNamespace(nodeid=f"tests/test_a.py::test_{i}") for i in range(5)]
    assert _longest_first(items, 2) == items
