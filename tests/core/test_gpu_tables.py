"""Tables in GPU memory whose labels are not integers (a cuDF frame's strings, floats).

``Graph.from_pandas`` renumbers them on the host, as it renumbers a pandas frame's,
and builds the graph on the device: the label columns come down once, their ids go
up once. cuDF is not installed here: its string column is played by a stand-in that
behaves as cuDF's does where gunpy touches it (no ``__cuda_array_interface__`` for
strings, no implicit NumPy conversion, ``to_pandas()`` to copy it down). The oracle
is networkx's ``from_pandas_edgelist`` on the same frame in host memory.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy

pd = pytest.importorskip("pandas")

SRC = ["paris", "lyon", "lyon", "nice", "paris", "lille", "nice"]
DST = ["lyon", "nice", "paris", "paris", "lille", "lille", "nice"]
W = [1.5, 2.0, 1.0, 0.5, 4.0, 1.0, 9.0]  # lyon -> paris after paris -> lyon, lighter


class CudfStrings:
    """A cuDF string column's stand-in (module ``cudf...``, dtype object)."""

    __module__ = "cudf.core.series"

    def __init__(self, values):
        self.values = list(values)
        self.dtype = np.dtype(object)
        self.copies = 0

    @property
    def __cuda_array_interface__(self):
        raise TypeError("Strings are not yet supported via __cuda_array_interface__")

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a host NumPy array via __array__ is not "
                        "allowed, To explicitly construct a GPU matrix, consider using "
                        ".to_cupy()")

    def to_pandas(self):
        self.copies += 1
        return pd.Series(self.values, dtype=object)


def _oracle(directed, weighted=True):
    df = pd.DataFrame({"s": SRC, "t": DST, "w": W})
    return nx.from_pandas_edgelist(df, "s", "t", edge_attr="w" if weighted else None,
                                   create_using=nx.DiGraph if directed else nx.Graph)


def _same(G, g, weighted=True):
    h = G.to_networkx()
    assert sorted(h.nodes) == sorted(g.nodes)
    assert {frozenset(e) if not g.is_directed() else e for e in h.edges} == \
        {frozenset(e) if not g.is_directed() else e for e in g.edges}
    if weighted:
        for u, v, w in g.edges(data="w"):
            assert h[u][v]["weight"] == w


@pytest.mark.sim
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_string_labels_in_gpu_memory_are_renumbered_on_the_host(directed, weighted):
    from numba import cuda
    s, t = CudfStrings(SRC), CudfStrings(DST)
    table = {"s": s, "t": t}
    if weighted:
        table["w"] = cuda.to_device(np.array(W))
    G = gunpy.Graph.from_pandas(table, "s", "t", "w" if weighted else None, directed=directed,
                                remove_self_loops=False)
    assert G.on_device  # built where the table is
    assert G.node_labels == sorted(set(SRC) | set(DST))
    assert s.copies == t.copies == 1  # each label column came down once
    _same(G, _oracle(directed, weighted), weighted)
    host = gunpy.Graph.from_pandas(pd.DataFrame({"s": SRC, "t": DST, "w": W}), "s", "t",
                                   "w" if weighted else None, directed=directed,
                                   remove_self_loops=False)
    for name in ("row_offsets", "column_indices", "values"):
        a, b = getattr(G, name), getattr(host, name)
        assert (a is None and b is None) or np.array_equal(a, b), name
    r = gunpy.bfs(G, G.node_labels.index("paris"), backend="cuda")
    assert r.depth.tolist() == gunpy.bfs(host, host.node_labels.index("paris"),
                                         backend="cpu").depth.tolist()


@pytest.mark.sim
def test_float_labels_in_gpu_memory_are_renumbered_on_the_host():
    from numba import cuda
    src, dst = np.array([0.5, 2.5, 2.5, -1.0]), np.array([2.5, 0.5, 7.0, 0.5])
    G = gunpy.Graph.from_pandas({"s": cuda.to_device(src), "t": cuda.to_device(dst)}, "s",
                                "t", directed=True)
    host = gunpy.Graph.from_pandas(pd.DataFrame({"s": src, "t": dst}), "s", "t")
    assert G.on_device and G.node_labels == host.node_labels == [-1.0, 0.5, 2.5, 7.0]
    assert np.array_equal(G.column_indices, host.column_indices)
    assert np.array_equal(G.row_offsets, host.row_offsets)


@pytest.mark.sim
def test_strings_in_gpu_memory_need_renumbering():
    with pytest.raises(ValueError, match=r"column 's' holds labels that are not integers, in "
                                         r"GPU memory: renumber=True"):
        gunpy.Graph.from_pandas({"s": CudfStrings(SRC), "t": CudfStrings(DST)}, "s", "t",
                                renumber=False)
