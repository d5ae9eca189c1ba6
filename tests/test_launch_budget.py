"""Kernel launches and host synchronisations per iteration, counted on the CUDA backend.

A GPU level on a road network costs little work and many round trips, so the
launches and device-to-host synchronisations each level makes decide its
speed there. The CUDA backend counts them (under the simulator too) and each
iteration's ``stats.per_iteration`` entry records ``launches``, ``syncs`` and
``uploads``. These tests pin today's counts so that a regression fails; the
goal (issue 11) is at most 3 launches and 1 sync per push or pull BFS level.
"""

import pytest

import gunpy
from gunpy.testing import nasty_graphs

pytestmark = pytest.mark.sim

G = nasty_graphs(small=True)["preferential_hubs"]

# (launches, syncs) at most, for every iteration after the first
BUDGET = {
    "bfs push": (4, 2),
    "bfs pull": (10, 2),
    "bfs idempotent push": (11, 4),
    "sssp": (17, 9),
    "cc": (20, 4),
    "pagerank pull": (7, 2),
}

RUNS = {
    "bfs push": lambda: gunpy.bfs(G, 0, direction="push", backend="cuda"),
    "bfs pull": lambda: gunpy.bfs(G, 0, direction="pull", backend="cuda"),
    "bfs idempotent push": lambda: gunpy.bfs(G, 0, direction="push", idempotent=True,
                                             backend="cuda"),
    "sssp": lambda: gunpy.sssp(G, 0, backend="cuda"),
    "cc": lambda: gunpy.cc(G, backend="cuda"),
    "pagerank pull": lambda: gunpy.pagerank(G, direction="pull", backend="cuda"),
}


@pytest.mark.parametrize("name", sorted(BUDGET))
def test_launches_and_syncs_per_iteration(name):
    its = RUNS[name]().stats.per_iteration
    assert len(its) >= 2
    launches, syncs = BUDGET[name]
    for it in its[1:]:
        assert it["launches"] <= launches, (name, it)
        assert it["syncs"] <= syncs, (name, it)
        assert it["launches"] >= 1 and it["syncs"] >= 1  # counted at all


def test_the_cpu_backend_reports_no_launch_counts():
    r = gunpy.bfs(G, 0, backend="cpu")
    assert "launches" not in r.stats.per_iteration[0]
    assert gunpy.backends.get_backend("cpu").counts() is None

