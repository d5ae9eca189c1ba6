"""What the networkx backend declines: every dispatched function on hostile inputs.

For each function networkx dispatches to gunpy and each class of unusual input (weights
whose sums pass 2**53, int64 weights float64 cannot hold, inf / -inf / NaN, negative and
zero weights, missing attributes, strings, Decimal, Fraction, complex, bools, NumPy's
narrow types, weight functions; multigraphs, self-loops, unsortable and huge node keys,
directed graphs, empty and one-node graphs) the call runs three ways: networkx alone,
``backend="gunpy"``, and networkx's automatic mode (``backend_priority = ["gunpy"]``,
gunpy's size thresholds set to 0 so that gunpy is asked even on these tiny graphs).
Each must give networkx's answer (values and types; the same exception type), or gunpy
declines: ``backend="gunpy"`` then raises networkx's ``NotImplementedError`` and the
automatic mode returns networkx's own answer. Host glue over the primitives: CPU mode.
"""

import itertools
import math
import types
from decimal import Decimal
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from gunpy.nx_backend import _FUNCTIONS, dispatch

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning",
                                        "ignore::RuntimeWarning")

W = "weight"
S, T = object(), object()  # the graph's first and last node, filled in per graph
_BY_DEFAULT = object()    # a weight the function reads without being told (its default)

#: name -> the calls made: (args after G, kwargs); S / T stand for a source / target
CALLS = {
    **{name: [((S,), {})] for name in (
        "bfs_edges", "generic_bfs_edges", "bfs_layers", "bfs_tree", "bfs_predecessors",
        "bfs_successors", "descendants", "ancestors", "node_connected_component",
        "single_source_shortest_path", "single_source_shortest_path_length", "predecessor")},
    **{name: [((T,), {})] for name in ("single_target_shortest_path",
                                         "single_target_shortest_path_length")},
    "descendants_at_distance": [((S, 2), {})],
    "has_path": [((S, T), {})],
    "bidirectional_shortest_path": [((S, T), {}), ((T, S), {}), ((S, "not a node"), {})],
    **{name: [((), {})] for name in (
        "is_connected", "number_connected_components", "is_weakly_connected",
        "number_weakly_connected_components", "connected_components",
        "weakly_connected_components", "strongly_connected_components",
        "number_strongly_connected_components", "is_strongly_connected", "condensation",
        "all_pairs_shortest_path", "all_pairs_shortest_path_length", "global_efficiency",
        "degree_centrality", "in_degree_centrality", "out_degree_centrality", "triangles",
        "transitivity", "clustering", "average_clustering", "core_number", "k_core",
        "k_shell", "k_crust", "isolates", "number_of_isolates", "number_of_selfloops",
        "overall_reciprocity", "is_tree", "is_forest", "is_branching", "is_arborescence")},
    "is_isolate": [((S,), {}), ((T,), {}), (("not a node",), {})],
    "reciprocity": [((), {}), ((S,), {}), (([S, T],), {}), (([S, "not a node"],), {})],
    "is_negatively_weighted": [((), {W: W}), ((), {}), ((), {"edge": S})],
    "k_corona": [((1,), {})],
    "k_truss": [((3,), {}), ((0,), {})],
    "k_edge_components": [((1,), {}), ((2,), {}), ((3,), {}), ((0,), {})],
    "lowest_common_ancestor": [((S, T), {}), ((T, S), {"default": "none"}),
                               ((S, "not a node"), {})],
    "average_shortest_path_length": [((), {}), ((), {W: W}),
                                     ((), {W: W, "method": "bellman-ford"})],
    "shortest_path": [((S,), {W: W}), ((S,), {W: W, "method": "bellman-ford"})],
    "shortest_path_length": [((S,), {W: W}), ((S, T), {W: W}),
                             ((S,), {W: W, "method": "bellman-ford"}),
                             ((S, T), {W: W, "method": "bellman-ford"})],
    "single_source_dijkstra": [((S,), {W: W}), ((S, T), {W: W})],
    "all_pairs_dijkstra_path_length": [((), {W: W}), ((), {W: W, "cutoff": 2})],
    **{name: [((S,), {W: W})] for name in (
        "single_source_dijkstra_path", "single_source_dijkstra_path_length",
        "single_source_bellman_ford_path_length", "single_source_bellman_ford_path",
        "bellman_ford_predecessor_and_distance")},
    **{name: [((S, T), {W: W})] for name in (
        "dijkstra_path", "dijkstra_path_length", "bellman_ford_path",
        "bellman_ford_path_length")},
    "single_source_bellman_ford": [((S,), {W: W}), ((S, T), {W: W})],
    **{name: [(([S],), {W: W})] for name in (
        "multi_source_dijkstra", "multi_source_dijkstra_path",
        "multi_source_dijkstra_path_length")},
    **{name: [((), {}), ((), {W: W})] for name in (
        "betweenness_centrality", "edge_betweenness_centrality", "eccentricity")},
    **{name: [((), {}), ((), {"distance": W})] for name in (
        "closeness_centrality", "harmonic_centrality")},
    "pagerank": [((), {W: W})],
    "hits": [((), {_BY_DEFAULT: W})],  # networkx's hits reads "weight" unasked
    "louvain_communities": [((), {W: W, "seed": 1})],
    "minimum_spanning_edges": [((), {W: W})],
    "minimum_spanning_tree": [((), {W: W})],
    "all_pairs_dijkstra": [((), {W: W}), ((), {W: W, "cutoff": 2})],
    "all_pairs_dijkstra_path": [((), {W: W}), ((), {W: W, "cutoff": 2})],
    "all_pairs_bellman_ford_path_length": [((), {W: W})],
    "all_pairs_bellman_ford_path": [((), {W: W})],
    **{name: [((), {}), (([(S, T), (T, S), (S, S)],), {})] for name in (
        "jaccard_coefficient", "resource_allocation_index", "adamic_adar_index",
        "preferential_attachment", "common_neighbor_centrality")},
    "eigenvector_centrality": [((), {}), ((), {W: W}), ((), {"max_iter": 3})],
    "katz_centrality": [((), {}), ((), {W: W}),
                        ((), {"alpha": 0.05, "beta": 2, "normalized": False})],
    "ego_graph": [((S,), {}), ((S, 2), {"center": False}), ((T, 1.5), {"undirected": True}),
                  ((S, 2), {"distance": W}), ((S, -1), {}), (("not a node",), {})],
    "complement": [((), {})],
    "reverse": [((), {}), ((), {"copy": False})],
    "is_empty": [((), {})],
    "average_neighbor_degree": [((), {}), ((), {W: W}),
                                ((), {"source": "in", "target": "in+out"}),
                                ((), {"nodes": [T, S, "not a node"]}), ((), {"nodes": S})],
    "average_degree_connectivity": [((), {}), ((), {W: W}),
                                    ((), {"source": "in", "target": "out", W: W}),
                                    ((), {"nodes": [T, S, S]}), ((), {"nodes": S})],
    "voterank": [((), {}), ((2,), {}), ((-1,), {})],
    "square_clustering": [((), {}), ((S,), {}), (([S, T, "x"],), {})],
}

#: answers compared within an absolute tolerance (power iterations, gunpy's to tol=1e-8
#: for hits; sums taken in gunpy's order); the others are networkx's to the bit
APPROX = {"pagerank": 1e-9, "hits": 1e-6, "betweenness_centrality": 1e-9,
          "edge_betweenness_centrality": 1e-9, "eigenvector_centrality": 1e-9,
          "katz_centrality": 1e-9, "resource_allocation_index": 1e-12,
          "adamic_adar_index": 1e-12, "average_neighbor_degree": 1e-12}


def _base(directed=False):
    """Six nodes, two cycles sharing an edge and a pendant: connected (strongly, directed)."""
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_edges_from([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3), (4, 5)])
    if directed:
        g.add_edge(5, 4)
    for i, (u, v) in enumerate(g.edges):
        g[u][v][W] = 1 + i % 3
    return g


def _weighted(values, directed=False):
    """The base graph with ``values`` as its weights, cycled over the edges."""
    def build():
        g = _base(directed)
        for (u, v), x in zip(g.edges, itertools.cycle(values)):
            g[u][v][W] = x
        return g
    return build


def _missing():
    g = _base()
    del g[0][1][W], g[3][4][W]
    return g


def _multi(directed=False):
    def build():
        g = (nx.MultiDiGraph if directed else nx.MultiGraph)(_base(directed))
        g.add_edge(0, 1, weight=7)
        g.add_edge(2, 3, weight=1)
        return g
    return build


def _self_loops():
    g = _base()
    g.add_edge(2, 2, weight=1)
    g.add_edge(5, 5, weight=3)
    return g


def _relabelled(labels):
    def build():
        return nx.relabel_nodes(_base(), dict(enumerate(labels)))
    return build


def _path(weight, n=8):
    def build():
        g = nx.path_graph(n)
        nx.set_edge_attributes(g, weight, W)
        return g
    return build


#: class -> graph builder; weights that are hostile only where a call reads them
WEIGHTS = {
    "int sums past 2**53": _path(2 ** 52 + 1),
    "ints above 2**53": _weighted([2 ** 53 + 1, 3, 2 ** 53 + 7]),
    "int64 above 2**53": _weighted([np.int64(2 ** 60 + 1), np.int64(1)]),
    "ints above int64": _weighted([2 ** 70 + 1, 1]),
    "int64 sums past int64": _path(np.int64(2 ** 62), 6),
    "inf": _weighted([1, 2, math.inf]),
    "-inf": _weighted([1, -math.inf, 2]),
    "nan": _weighted([1, math.nan, 2]),
    "negative": _weighted([1, 2, -1]),
    "negative directed": _weighted([1, 2, -1], directed=True),
    "zero": _weighted([1, 0, 2]),
    "missing": _missing,
    "float and int": _weighted([1, 0.5, 2, 0.1]),
    "inexact floats": _weighted([0.1, 0.2, 0.3, 0.7]),
    "strings": _weighted(["1", "2"]),
    "Decimal": _weighted([Decimal("0.1"), Decimal(2)]),
    "Fraction": _weighted([Fraction(1, 3), Fraction(2)]),
    "complex": _weighted([1 + 0j, 2 + 1j]),
    "bool": _weighted([True]),
    "bool with False": _weighted([True, False, True]),
    "float32": _weighted([np.float32(0.1), np.float32(0.2), np.float32(0.7)]),
    "int32": _weighted([np.int32(2 ** 30), np.int32(3)]),
    "NumPy int64": _weighted([np.int64(2), np.int64(3)]),
    "NumPy float64": _weighted([np.float64(0.5), np.float64(1.25)]),
    "float sums overflow": _path(1e308, 4),
    "ints above float64's range": _weighted([10 ** 400, 1]),
    "ints above 2**53, distinct": _weighted([2 ** 53 + 1, 2 ** 53 + 2, 2 ** 53 + 3]),
    "lists (unhashable)": _weighted([[1], [2]]),
}
STRUCTURE = {
    "plain": _base,
    "directed": lambda: _base(directed=True),
    "multigraph": _multi(),
    "multidigraph": _multi(directed=True),
    "self-loops": _self_loops,
    "unsortable keys": _relabelled([0, "a", (1, 2), 2.5, frozenset({1}), "b"]),
    "huge int keys": _relabelled([2 ** 70 + i for i in range(6)]),
    "empty": nx.Graph,
    "empty directed": nx.DiGraph,
    "one node": lambda: nx.empty_graph(1),
    "one node, a self-loop": lambda: nx.Graph([(0, 0, {W: 2})]),
    "two nodes, no edge": lambda: nx.empty_graph(2),
}


def _cases(name):
    for i, (args, kwargs) in enumerate(CALLS[name]):
        weighted = bool(kwargs.keys() & {W, "distance", _BY_DEFAULT})
        for cls in ({**STRUCTURE, **WEIGHTS} if weighted else STRUCTURE):
            yield i, cls, args, kwargs
        for key in kwargs.keys() & {W, "distance"}:  # a weight function, on the base graph
            yield i, "weight function", args, {**kwargs, key: lambda u, v, d: d.get(W, 1)}


def _graph(cls):
    return {**STRUCTURE, **WEIGHTS}.get(cls, _base)()


def _bind(g, args, kwargs):
    nodes = list(g)
    first, last = (nodes[0], nodes[-1]) if nodes else (0, 1)
    args = [first if a is S else last if a is T else [first] if a == [S] else a for a in args]
    kwargs = {k: v for k, v in kwargs.items() if k is not _BY_DEFAULT}
    return args, kwargs


def _run(f, g, args, kwargs):
    """``("ok", materialised result)`` or ``("raised", exception type, message)``."""
    try:
        return ("ok", _materialise(f(g, *args, **kwargs)))
    except Exception as e:  # noqa: BLE001 (any exception: compared by type)
        return ("raised", type(e), str(e))


def _materialise(x):
    if isinstance(x, nx.Graph):
        edges = x.edges(keys=True, data=True) if x.is_multigraph() else x.edges(data=True)
        return ("graph", type(x), list(x.nodes(data=True)), list(edges), dict(x.graph))
    if isinstance(x, types.GeneratorType | map | filter | zip):
        return [_materialise(y) for y in x]
    if isinstance(x, dict):
        return {k: _materialise(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return type(x)(_materialise(y) for y in x)
    return x


def _same(a, b, approx):
    """Equal values of equal types (NaN equals NaN; floats within ``approx``)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and \
            all(_same(a[k], b[k], approx) for k in a)
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and \
            all(_same(x, y, approx) for x, y in zip(a, b))
    if isinstance(a, float | np.floating) and isinstance(b, float | np.floating):
        if type(a) is not type(b):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=approx, abs_tol=approx)
    if isinstance(a, type) or isinstance(b, type):
        return a is b
    return type(a) is type(b) and a == b


def _agree(name, g, got, want):
    """``got`` is networkx's answer ``want`` (louvain: a partition of the same nodes)."""
    if got[0] != want[0]:
        return False
    if got[0] == "raised":
        return got[1] is want[1]
    if name == "louvain_communities":  # another partition of about the same modularity
        members = [v for c in got[1] for v in c]
        return len(members) == len(set(members)) == len(g) and set(members) == set(g)
    if name == "hits" and not _same(got[1], want[1], APPROX[name]):
        return _principal(g, *got[1])
    return _same(got[1], want[1], APPROX.get(name, 0))


def _principal(g, hubs, authorities):
    """Where the largest singular value of ``g``'s weighted adjacency matrix is repeated,
    networkx's hits (ARPACK from a random start) returns any vector of its subspace: gunpy's
    must then be one, normalised to sum 1 (checked with NumPy's SVD of the raw matrix)."""
    A = nx.to_numpy_array(g, weight=W)
    top = np.linalg.svd(A, compute_uv=False)
    if top.size < 2 or top[1] < top[0] * (1 - 1e-6):
        return False  # a simple singular value: networkx's answer is the answer
    a = np.array([authorities[v] for v in g])
    h = np.array([hubs[v] for v in g])
    return bool(abs(a.sum() - 1) < 1e-9 and abs(h.sum() - 1) < 1e-9 and
                np.allclose(A.T @ A @ a, top[0] ** 2 * a, atol=1e-6 * top[0] ** 2) and
                np.allclose(A @ a / (A @ a).sum(), h, atol=1e-6))


def audit(name, calls=None):
    """Every case of ``name`` where gunpy's answer is not networkx's: ``[(case, what)]``
    (``calls``: a list gunpy's function appends to; the automatic mode must run gunpy on
    the plain graphs where networkx answers and ``can_run`` lets gunpy)."""
    problems = []
    for i, cls, args, kwargs in _cases(name):
        g = _graph(cls)
        a, k = _bind(g, args, kwargs)
        plain = cls in ("plain", "directed")
        problems += [(f"{name}[{i}] on {cls}", what)
                     for what in check(name, g, a, k, calls if plain else None)]
    return problems


def check(name, g, args, kwargs, calls=None):
    """What is wrong with gunpy's answers to one call (empty: nothing): ``backend="gunpy"``
    gives networkx's answer or declines, the automatic mode gives networkx's answer, and
    (``calls`` given) ran gunpy where networkx answers and ``can_run`` lets gunpy."""
    f = getattr(nx, name) if hasattr(nx, name) else getattr(nx.community, name)
    want = _run(f, g, args, {**kwargs, "backend": "networkx"})
    with nx.config(fallback_to_nx=False):
        got = _run(f, g, args, {**kwargs, "backend": "gunpy"})
    problems = []
    declined = got[0] == "raised" and got[1] is NotImplementedError and "gunpy" in got[2]
    if not (declined or _agree(name, g, got, want)):
        problems.append(f"backend='gunpy': {got!r:.300} vs networkx {want!r:.300}")
    ran = len(calls) if calls is not None else None
    with nx.config(backend_priority={"algos": ["gunpy"], "generators": ["gunpy"]}):
        auto = _run(f, g, args, kwargs)
    if calls is not None and want[0] == "ok" and ran == len(calls) and \
            dispatch.can_run(name, (g, *args), kwargs) is True:
        problems.append("automatic mode did not run gunpy")
    if not _agree(name, g, auto, want):
        problems.append(f"automatic: {auto!r:.300} vs networkx {want!r:.300}")
    return problems


@pytest.fixture
def eager(monkeypatch):
    """gunpy's size thresholds at 0: the automatic mode asks gunpy on tiny graphs too."""
    for family in dispatch.MIN_EDGES:
        monkeypatch.setitem(dispatch.MIN_EDGES, family, (0, 0))


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_gunpy_answers_as_networkx_or_declines(name, eager, monkeypatch):
    from gunpy.nx_backend import BackendInterface
    calls, real = [], getattr(BackendInterface, name)
    monkeypatch.setattr(BackendInterface, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    assert not audit(name, calls)
    assert calls  # gunpy answered some cases


def test_integer_sums_past_2_53_and_inf_weights_are_networkx_s(eager):
    """The cases that were wrong: Dijkstra's int distances on a 3,000-node path whose sums
    pass 2**53 (float64 rounded 2,997 of them), and inf weights that gunpy refused with an
    error (Dijkstra's ValueError, PageRank's non-convergence) where networkx answers."""
    g = nx.path_graph(3000)
    nx.set_edge_attributes(g, 2 ** 52 + 1, W)
    want = nx.single_source_dijkstra_path_length(g, 0, backend="networkx")
    assert want[2999] == 2999 * (2 ** 52 + 1)
    with nx.config(backend_priority=["gunpy"]):
        got = nx.single_source_dijkstra_path_length(g, 0)
    assert got == want and all(type(x) is int for x in got.values())
    with pytest.raises(NotImplementedError, match="gunpy"):
        nx.single_source_dijkstra_path_length(g, 0, backend="gunpy")
    assert "2**53" in dispatch.can_run("single_source_dijkstra_path_length", (g, 0), {})
    h = nx.Graph([(0, 1, {W: 1.0}), (1, 2, {W: math.inf}), (2, 0, {W: 2.0}), (2, 3, {W: 1})])
    for f in (nx.single_source_dijkstra_path_length, nx.single_source_dijkstra):
        with nx.config(backend_priority=["gunpy"]):
            assert f(h, 0) == f(h, 0, backend="networkx")
    h.add_edge(3, 4, weight=math.inf)  # node 4: at distance inf in networkx's answer
    with nx.config(backend_priority=["gunpy"]):
        assert nx.single_source_dijkstra_path_length(h, 0)[4] == math.inf
        assert nx.pagerank(h) == nx.pagerank(h, backend="networkx")
    with pytest.raises(NotImplementedError, match="gunpy"):
        nx.pagerank(h, backend="gunpy")


def test_gunpy_s_primitives_refuse_negative_nan_and_infinite_weights(backend):
    """PageRank and SSSP share one weight check (a NaN weight turned every rank NaN)."""
    import doctest

    import gunpy
    from gunpy.primitives import _weights
    for bad in (math.nan, -1.0, math.inf, -math.inf):
        G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, bad, 2.0], num_vertices=3,
                                   directed=True)
        for run, name in ((lambda: gunpy.pagerank(G, backend=backend), "PageRank"),
                          (lambda: gunpy.ppr(G, [0], backend=backend), "PageRank"),
                          (lambda: gunpy.sssp(G, 0, backend=backend), "SSSP")):
            with pytest.raises(ValueError, match=f"^{name} needs non-negative finite weights; "
                                                 f"edge 1->2 has weight {bad!r}$"):
                run()
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, 0.0, 2.0], num_vertices=3,
                               directed=True)  # a zero weight: vertex 1 dangles, as networkx's
    d = nx.DiGraph([(0, 1, {W: 1.0}), (1, 2, {W: 0.0}), (2, 0, {W: 2.0})])
    assert gunpy.pagerank(G, backend=backend).rank.tolist() == \
        pytest.approx([nx.pagerank(d)[v] for v in range(3)], abs=1e-9)
    assert doctest.testmod(_weights).failed == 0


#: the weights a random graph's edges draw from: each class's hostile values, mixed
ODD_WEIGHTS = [2 ** 52 + 1, 2 ** 53 + 1, np.int64(2 ** 60 + 1), 2 ** 70 + 1, math.inf,
               -math.inf, math.nan, -1, 0, 0.1, 0.5, 1e308, 1e-300, True, False,
               np.float32(0.1), np.int32(2 ** 30), Decimal("0.1"), Fraction(1, 3), 1, 2, 3]
WEIGHTED = sorted(name for name, calls in CALLS.items()
                  if any(k.keys() & {W, "distance", _BY_DEFAULT} for _, k in calls))


@pytest.mark.filterwarnings("ignore")
def test_fuzz_networkx_graphs_with_odd_weights(eager):
    """Random small graphs, directed or not, whose edges mix the hostile weights above (and
    some edges with none): every weighted function gives networkx's answer through gunpy,
    or gunpy declines (``CALLS``' weighted calls, checked as :func:`audit` checks them)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @st.composite
    def graphs(draw):
        directed = draw(st.booleans())
        n = draw(st.integers(1, 7))
        pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=14))
        g = nx.DiGraph() if directed else nx.Graph()
        g.add_nodes_from(range(n))
        for u, v in pairs:
            w = draw(st.sampled_from(ODD_WEIGHTS + [None]))
            g.add_edge(u, v, **({} if w is None else {W: w}))
        return g

    @settings(deadline=None)  # the profile's examples: 30 in CI, more with --fuzz
    @given(g=graphs(), name=st.sampled_from(WEIGHTED), data=st.data())
    def run(g, name, data):
        args, kwargs = data.draw(st.sampled_from(CALLS[name]))
        a, k = _bind(g, args, kwargs)
        assert not check(name, g, a, k), (name, a, k, list(g.edges(data=True)))

    run()
