"""bench/gap.py's own parts: GAP's serialized graph format, symmetric weights and the
reading of GAP's printouts (the comparison itself needs GAP's binaries: not in CI)."""

import importlib.util
import os

import numpy as np
import scipy.sparse as sp

import gunpy
from _helpers import ROOT

_PATH = str(ROOT / "bench" / "gap.py")


def _gap():
    spec = importlib.util.spec_from_file_location("gap_harness", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_graphs_are_written_as_gap_reads_them(tmp_path):
    gap = _gap()
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (0, 1)]  # a loop, a repeat, vertex 4 alone
    G = gunpy.Graph.from_edges(*zip(*edges), num_vertices=5, directed=False,
                               remove_duplicates=False, remove_self_loops=False)
    clean = gunpy.Graph.from_edges(np.repeat(np.arange(5), np.diff(G.row_offsets)),
                                   G.column_indices, num_vertices=5, directed=False)
    w = gap.weights(clean)
    gap.write_sg(tmp_path / "g.sg", clean)
    gap.write_sg(tmp_path / "g.wsg", clean, w)
    raw = (tmp_path / "g.sg").read_bytes()
    assert raw[0] == 0  # undirected
    m, n = np.frombuffer(raw[1:17], np.int64)
    assert (n, m) == (5, 8)  # four undirected edges, each stored both ways
    offsets = np.frombuffer(raw[17:17 + 8 * (n + 1)], np.int64)
    cols = np.frombuffer(raw[17 + 8 * (n + 1):], np.int32)
    A = sp.csr_array((np.ones(len(edges) * 2), (*zip(*(edges + [(v, u) for u, v in edges])),)),
                     shape=(5, 5))
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    assert offsets.tolist() == A.indptr.tolist() and cols.tolist() == A.indices.tolist()
    pairs = np.frombuffer((tmp_path / "g.wsg").read_bytes()[17 + 8 * (n + 1):],
                          np.int32).reshape(-1, 2)
    assert pairs[:, 0].tolist() == cols.tolist() and pairs[:, 1].tolist() == w.tolist()
    W = sp.csr_array((w, cols, offsets), shape=(5, 5)).toarray()
    assert (W == W.T).all() and w.min() >= 1 and w.max() <= 255


def test_gap_printouts_are_read():
    gap = _gap()
    assert gap.gap_answer("bfs", "Trial Time: 0.1\nBFS Tree has 1234 nodes and 99 edges\n",
                          0) == 1234
    assert gap.gap_answer("sssp", "SSSP Tree reaches 77 nodes\n", 0) == 77
    assert gap.gap_answer("tc", "Trial Time:  0.2\n480 triangles\n", 0) == 480
    cc = "\n5 biggest clusters\n0:900\n12:3\n40:7\n8:1\n9:1\nThere are 6 components\n"
    assert gap.gap_answer("cc", cc, 0) == [900, 7, 3, 1, 1]
    bc = "14758:1\n14870:0.00662227\n14605:0.00652092\n11935:0.0063576\n9508:0.00632799\n"
    assert gap.gap_answer("bc", bc, 14758) == [14870, 14605, 11935, 9508]  # the root dropped
    assert gap.gap_answer("pr", bc, 14758)[0] == 14758
