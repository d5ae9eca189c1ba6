"""read_mtx and read_edgelist: every bundled format, and malformed files named by line."""

import gzip
import os

import networkx as nx
import numpy as np
import pytest
import scipy.io

import gunpy
from gunpy import GraphFormatError

DATA = gunpy.datasets.data_dir()


def write(tmp_path, name, text, *, gz=False):
    p = tmp_path / name
    if gz:
        with gzip.open(p, "wt") as f:
            f.write(text)
    else:
        p.write_text(text)
    return str(p)


# ----------------------------------------------------------------------------- real files
@pytest.mark.parametrize("name", ["chesapeake.mtx", "karate.mtx", "netscience.mtx",
                                  "bips98_606.mtx"])
def test_mtx_matches_scipy_mmread(name):
    path = os.path.join(DATA, name)
    G = gunpy.read_mtx(path)
    A = scipy.io.mmread(path).tocsr()
    B = A.copy()
    B.setdiag(0)
    B.eliminate_zeros()
    expect = (B != 0).astype(int)
    if not G.directed:
        expect = ((expect + expect.T) > 0).astype(int)
    got = (G.to_scipy() != 0).astype(int)
    assert (got != expect).nnz == 0
    assert G.directed == ("general" in open(path).readline())


def test_bannerless_cities_mtx():
    G = gunpy.read_mtx(os.path.join(DATA, "cities.mtx"))
    assert G.num_vertices == 1185 and G.directed and G.weighted
    raw = np.loadtxt(os.path.join(DATA, "cities.mtx"), skiprows=1)
    loops = raw[:, 0] == raw[:, 1]
    assert G.num_edges == int((~loops).sum())
    A = G.to_scipy()
    r = raw[~loops][17]
    assert A[int(r[0]) - 1, int(r[1]) - 1] == pytest.approx(r[2])


def test_snap_header_relabel_and_keep():
    path = os.path.join(DATA, "CA-GrQc.txt")
    relabelled = gunpy.read_edgelist(path, directed=False, relabel=True)
    kept = gunpy.read_edgelist(path, directed=False)
    ref = nx.read_edgelist(path, comments="#", nodetype=int)
    ref.remove_edges_from(nx.selfloop_edges(ref))
    assert relabelled.num_vertices == ref.number_of_nodes() == 5242
    assert relabelled.num_edges // 2 == ref.number_of_edges()
    assert kept.num_vertices == max(ref.nodes) + 1
    assert kept.num_edges == relabelled.num_edges
    assert list(relabelled.node_labels[:3]) == sorted(ref.nodes)[:3]


def test_gzip_and_zero_based_edges():
    G = gunpy.read_edgelist(os.path.join(DATA, "facebook_combined.txt.gz"), directed=False)
    assert G.num_vertices == 4039 and G.num_edges == 2 * 88234


def test_one_based_road_network():
    G = gunpy.read_edgelist(os.path.join(DATA, "luxembourg_osm.edges"), directed=False,
                            one_based=True)
    assert G.num_vertices == 114599 and G.num_edges == 2 * 119666
    assert G.out_degrees().max() <= 6


def test_weighted_third_column():
    G = gunpy.read_edgelist(os.path.join(DATA, "email-Eu-core.edges"))
    assert G.weighted and G.directed and G.num_vertices == 1005


def test_delimiter_and_comments(tmp_path):
    p = write(tmp_path, "g.csv", "% a comment\n0,1,2.5\n1,2,0.5\n\n# another\n2,0,1\n")
    G = gunpy.read_edgelist(p, delimiter=",")
    assert G.num_edges == 3 and G.values.tolist() == [2.5, 0.5, 1.0]


def test_empty_file_gives_empty_graph(tmp_path):
    G = gunpy.read_edgelist(write(tmp_path, "e.txt", ""))
    assert G.num_vertices == 0 and G.num_edges == 0
    G = gunpy.read_edgelist(write(tmp_path, "c.txt", "# only\n# comments\n"))
    assert G.num_vertices == 0


def test_user_file_not_needed_after_load(tmp_path):
    p = write(tmp_path, "g.txt", "0 1\n1 2\n")
    G = gunpy.read_edgelist(p)
    os.unlink(p)
    assert G.num_edges == 2


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        gunpy.read_mtx("/nonexistent/x.mtx")


# ----------------------------------------------------------------------------- malformed
MTX_HEAD = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.mark.parametrize("text,line,match", [
    ("%%MatrixMarket matrix array real general\n3 3\n", 1, "coordinate"),
    ("%%MatrixMarket tensor coordinate real general\n3 3 1\n1 1 1\n", 1, "banner"),
    ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n", 1, "field"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", 1, "symmetry"),
    (MTX_HEAD + "3 3\n1 2\n", 2, "size line"),
    (MTX_HEAD + "3 4 1\n1 2\n", 2, "square"),
    (MTX_HEAD + "3 3 3\n1 2\n2 3\n", 4, "truncated"),
    (MTX_HEAD + "3 3 1\n1 2\n2 3\n", 4, "more entries"),
    (MTX_HEAD + "% c\n3 3 2\n1 2\n0 3\n", 5, "0 is not a valid"),
    (MTX_HEAD + "3 3 2\n1 2\n2 4\n", 4, "out of range"),
    (MTX_HEAD + "3 3 2\n1 x\n2 3\n", 3, "not a number"),
    (MTX_HEAD + "3 3 2\n1 2\n2 3 7\n", 4, "expected 2 numbers"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n2 3\n", 4, "expected 3"),
    (MTX_HEAD + "3 3 1\n1.5 2\n", 3, "not an integer"),
])
def test_malformed_mtx_names_the_line(tmp_path, text, line, match):
    p = write(tmp_path, "bad.mtx", text)
    with pytest.raises(GraphFormatError, match=match) as err:
        gunpy.read_mtx(p)
    assert err.value.line == line, str(err.value)
    assert f"line {line}" in str(err.value)


def test_empty_mtx(tmp_path):
    with pytest.raises(GraphFormatError, match="empty"):
        gunpy.read_mtx(write(tmp_path, "e.mtx", ""))


@pytest.mark.parametrize("text,kw,line,match", [
    ("0 1\n1 two\n", {}, 2, "not a number"),
    ("0 1\n1 2 3.0\n", {}, 2, "expected 2 columns"),
    ("# h\n0 1 1\n1 2\n", {}, 3, "expected 3 columns"),
    ("0 1\n-3 2\n", {}, 2, "negative"),
    ("0 1\n1.5 2\n", {}, 2, "not an integer"),
    ("1 2\n0 1\n", {"one_based": True}, 2, "0 is not a valid"),
    ("0 1\n1 9\n", {"num_vertices": 5}, 2, "out of range"),
    ("0 1 2 3\n", {}, 1, "columns"),
    ("0 1\n1 nan\n", {}, 2, "not an integer"),
    ("0 1 1.5\n1 2 nan\n", {}, 2, "not finite"),
])
def test_malformed_edgelist_names_the_line(tmp_path, text, kw, line, match):
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(GraphFormatError, match=match) as err:
        gunpy.read_edgelist(p, **kw)
    assert err.value.line == line, str(err.value)


def test_truncated_gzip(tmp_path):
    p = write(tmp_path, "g.txt.gz", "0 1\n" * 5000, gz=True)
    data = open(p, "rb").read()
    with open(p, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(GraphFormatError, match="gzip"):
        gunpy.read_edgelist(p)


def test_errors_are_value_errors(tmp_path):
    p = write(tmp_path, "bad.txt", "a b\n")
    with pytest.raises(ValueError):
        gunpy.read_edgelist(p)
