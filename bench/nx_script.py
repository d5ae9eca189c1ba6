"""A notebook's worth of networkx calls, with and without gunpy: step by step and in total.

    python bench/nx_script.py                          # email-Enron, then luxembourg_osm
    python bench/nx_script.py --graphs email-Enron --rounds 5
    python bench/nx_script.py --crossover              # should_run's thresholds, measured

The script is what a networkx user writes: load a graph as a networkx graph, then
connected components, a BFS and shortest path lengths from a node, PageRank,
betweenness centrality (``k=10`` sampled sources, and every source on a 500-node
piece, which on a sparse graph is small enough for ``should_run`` to leave it to
networkx: that step shows what a declined call costs), clustering and average
clustering, triangles, core numbers and Louvain communities, one after the other
on the one graph (a directed dataset's undirected graph). It runs plain (networkx alone) and with
``nx.config.backend_priority = ["gunpy"]`` (no other change: networkx converts the
graph on the first call gunpy takes and keeps the conversion in the graph's
cache), in one process, the two alternating, ``--rounds`` times, each round on a
fresh copy of the graph, so that every gunpy round pays its conversion once. Every
result is checked against networkx's (equal, floats to 1e-9; Louvain: a partition
whose modularity is within 0.02 of networkx's). A table of the medians per step, the total, and the
speed-up; one untimed round of each first (kernels compiled or loaded).

``--crossover`` times networkx and gunpy (``backend="gunpy"``, a cold conversion
and a cached one) per function family on ``nx.gnm_random_graph(n, 4 n)`` for
growing ``n``: the smallest size where gunpy is faster is the threshold in
``gunpy/nx_backend/dispatch.py``'s ``should_run`` (docs/networkx.md has the table).
``--crossover --families katz,voterank --sizes 250000`` times single calls on a
graph of a million edges.
"""

import argparse
import statistics
import sys
import time
import warnings

import networkx as nx

import gunpy

DEFAULT_GRAPHS = ("email-Enron", "luxembourg_osm")


def _graph(name):
    """A bundled dataset as the networkx graph a user would load (nodes 0..n-1)."""
    g = gunpy.datasets.load(name).to_networkx()
    return g.to_undirected() if g.is_directed() else g  # the script is undirected


def _source(g):
    return max(g, key=g.degree)  # a hub: the BFS reaches the whole component


def _steps(g):
    """``[(step, call(G) -> result, check(got, want) -> bool)]``: the script, in order."""
    s = _source(g)
    piece = g.subgraph(sorted(nx.node_connected_component(g, s))[:500]).copy()
    equal = _equal
    return [
        ("connected_components", lambda G: sorted(map(sorted, nx.connected_components(G))),
         equal),
        ("bfs_edges", lambda G: list(nx.bfs_edges(G, s)), equal),
        ("shortest_path_length", lambda G: nx.shortest_path_length(G, s), _same_dict),
        ("pagerank", lambda G: nx.pagerank(G), _close),
        ("betweenness k=10", lambda G: nx.betweenness_centrality(G, k=10, seed=1), _close),
        ("betweenness (500 nodes)", lambda G: nx.betweenness_centrality(piece), _close),
        ("clustering", lambda G: nx.clustering(G), _close),
        ("average_clustering", lambda G: nx.average_clustering(G), _close),
        ("triangles", lambda G: nx.triangles(G), equal),
        ("core_number", lambda G: nx.core_number(G), equal),
        ("louvain_communities", lambda G: _modularity(G, nx.community.louvain_communities(
            G, weight="weight", seed=1)), lambda a, b: abs(a - b) < 0.02),
    ]


def _equal(a, b):
    return a == b


def _same_dict(a, b):
    return a == b and list(a) == list(b)


def _close(a, b, tol=1e-9):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= tol * max(1, abs(b[k]))
                                            for k in a)
    return abs(a - b) <= tol * max(1, abs(b))


def _modularity(G, communities):
    return nx.community.modularity(G, communities)


def _round(g, steps, backend):
    """One pass of the script on a fresh copy of ``g``: ``({step: seconds}, {step: result})``."""
    G = g.copy()  # a new graph: no conversion cached from an earlier round
    times, results = {}, {}
    with nx.config.backend_priority(algos=[] if backend is None else [backend]):
        for name, call, _ in steps:
            t = time.perf_counter()
            results[name] = call(G)
            times[name] = time.perf_counter() - t
    return times, results


def script(name, rounds, progress=True):
    """Time the script on dataset ``name``: ``{mode: {step: [seconds]}}`` (checked)."""
    g = _graph(name)
    steps = _steps(g)
    modes = {"networkx": None, "gunpy": "gunpy"}
    times = {mode: {step: [] for step, *_ in steps} for mode in modes}
    bar = _bar(progress, total=2 * (rounds + 1), desc=name)
    for r in range(rounds + 1):  # round 0: untimed (kernels compiled or loaded)
        results = {}
        for mode, backend in modes.items():
            t, results[mode] = _round(g, steps, backend)
            if r:
                for step, seconds in t.items():
                    times[mode][step].append(seconds)
            bar.update(1)
        for step, _, check in steps:
            if not check(results["gunpy"][step], results["networkx"][step]):
                raise AssertionError(f"{name}: {step} differs from networkx's")
    bar.close()
    return g, times


def _bar(progress, **kw):
    try:
        from tqdm.auto import tqdm
        return tqdm(disable=not progress, file=sys.stderr, **kw)
    except ImportError:  # no progress bar: a stand-in with the same two methods
        return type("Bar", (), {"update": lambda self, n: None, "close": lambda self: None})()


def report(name, g, times):
    """The markdown table of one graph's medians."""
    print(f"\n{name}: {g.number_of_nodes():,} nodes, {g.number_of_edges():,} edges "
          f"(medians of {len(next(iter(times['networkx'].values())))} rounds, ms)\n")
    print("| step | networkx | backend_priority=[\"gunpy\"] | speed-up |")
    print("|---|---:|---:|---:|")
    total = {mode: 0.0 for mode in times}
    for step in times["networkx"]:
        med = {mode: statistics.median(times[mode][step]) for mode in times}
        for mode in times:
            total[mode] += med[mode]
        print(f"| {step} | {med['networkx'] * 1e3:,.1f} | {med['gunpy'] * 1e3:,.1f} | "
              f"{med['networkx'] / med['gunpy']:.1f}x |")
    print(f"| **total** | **{total['networkx'] * 1e3:,.0f}** | **{total['gunpy'] * 1e3:,.0f}**"
          f" | **{total['networkx'] / total['gunpy']:.1f}x** |")


# ----------------------------------------------------------------------------- crossover
FAMILIES = {
    "traversal": lambda G, s: list(nx.bfs_edges(G, s, **_kw())),
    "shortest paths": lambda G, s: nx.single_source_dijkstra_path_length(G, s, **_kw()),
    "components": lambda G, s: list(nx.connected_components(G, **_kw())),
    "betweenness": lambda G, s: nx.betweenness_centrality(G, **_kw()),
    "closeness": lambda G, s: nx.closeness_centrality(G, **_kw()),
    "pagerank": lambda G, s: nx.pagerank(G, **_kw()),
    "clustering": lambda G, s: nx.clustering(G, **_kw()),
    "louvain": lambda G, s: nx.community.louvain_communities(G, seed=1, **_kw()),
    "cores": lambda G, s: nx.core_number(G, **_kw()),
    "truss": lambda G, s: nx.k_truss(G, 3, **_kw()),
    "lca": lambda G, s: nx.lowest_common_ancestor(G, len(G) // 2, len(G) - 1, **_kw()),
    "edge components": lambda G, s: list(nx.k_edge_components(G, 2, **_kw())),
    "eigenvector": lambda G, s: nx.eigenvector_centrality(G, max_iter=1000, **_kw()),
    "katz": lambda G, s: nx.katz_centrality(G, alpha=0.05, max_iter=1000, **_kw()),
    "link prediction": lambda G, s: list(nx.jaccard_coefficient(G, _pairs(G), **_kw())),
    "voterank": lambda G, s: nx.voterank(G, 10, **_kw()),
    "neighbour degree": lambda G, s: nx.average_neighbor_degree(G, **_kw()),
    "ego graph": lambda G, s: nx.ego_graph(G, s, radius=2, **_kw()),
}
_BACKEND = {}


def _pairs(G):
    """A node pair a node (each with a node some way along), for the link-prediction scores."""
    n = G.number_of_nodes()
    return [(i, (7 * i + 3) % n) for i in range(n)]


def _kw():
    return dict(_BACKEND)


def _random_graph(n):
    g = nx.gnm_random_graph(n, 4 * n, seed=n)
    for u, v, d in g.edges(data=True):
        d["weight"] = 1 + (u * 31 + v) % 7
    return g


def _random_dag(n):
    """The same edges directed from the smaller id to the larger (lowest_common_ancestor)."""
    dag = nx.DiGraph()
    dag.add_nodes_from(range(n))
    dag.add_edges_from((min(u, v), max(u, v)) for u, v in _random_graph(n).edges)
    return dag


#: families timed on another graph than ``_random_graph``
_GRAPH_OF = {"lca": _random_dag}


def _time(call, G, s, reps, backend=None, cold=False):
    """Median seconds of ``call`` (``cold``: each time on a graph with an empty cache)."""
    out = []
    for _ in range(reps):
        if cold:
            G.__networkx_cache__.clear()
        _BACKEND.clear()
        if backend:
            _BACKEND["backend"] = backend
        t = time.perf_counter()
        call(G, s)
        out.append(time.perf_counter() - t)
    _BACKEND.clear()
    return statistics.median(out)


def crossover(sizes, families, budget):
    """Print, per family, networkx's and gunpy's time on each size (ms), until one call
    takes ``budget`` seconds."""
    print("| family | nodes | edges | networkx | gunpy, converting | gunpy, cached |")
    print("|---|---:|---:|---:|---:|---:|")
    for family in families:
        call, make = FAMILIES[family], _GRAPH_OF.get(family, _random_graph)
        call(make(64), 0)  # networkx's own imports
        _time(call, make(200), 0, 1, "gunpy")  # kernels compiled or loaded
        for n in sizes:
            g = make(n)
            reps = 5 if n <= 3000 else 3
            t_nx = _time(call, g, 0, reps)
            t_cold = _time(call, g, 0, reps, "gunpy", cold=True)
            t_warm = _time(call, g, 0, reps, "gunpy")
            print(f"| {family} | {n:,} | {g.number_of_edges():,} | {t_nx * 1e3:.2f} | "
                  f"{t_cold * 1e3:.2f} | {t_warm * 1e3:.2f} |", flush=True)
            if max(t_nx, t_cold) > budget:
                break


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", default=",".join(DEFAULT_GRAPHS))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--crossover", action="store_true")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--sizes", default="16,32,64,128,256,512,1024,2048,4096,16384")
    p.add_argument("--budget", type=float, default=2.0, help="crossover: seconds a call")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)
    if args.crossover:
        crossover([int(x) for x in args.sizes.split(",")], args.families.split(","),
                  args.budget)
        return
    for name in args.graphs.split(","):
        g, times = script(name, args.rounds, progress=not args.quiet)
        report(name, g, times)


if __name__ == "__main__":
    main()
