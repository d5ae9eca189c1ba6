"""Edge lists (``src dst [weight]`` per line: SNAP, CSV), and recognising a file's format."""

import itertools
import os

import numpy as np

from gunpy._inputs import _as_count
from gunpy.errors import GraphFormatError
from gunpy.graph import Graph
from gunpy.io._edges import _Edges
from gunpy.io._text import (MAX_LINE, _Block, _blocks, _capacity, _check_ids,
                            _check_vertex_count, _line_quote, _parse_rows)
from gunpy.io.metis import _looks_like_metis, read_metis
from gunpy.io.mtx import read_mtx

__all__ = ["read_edgelist", "detect_format"]


def read_edgelist(path, *, directed=None, one_based=False, weighted=None, comments="#",
                  delimiter=None, relabel=False, num_vertices=None, remove_self_loops=True,
                  remove_duplicates=True, max_vertices=None, format=None):
    """Read an edge list (``src dst [weight]`` per line) into a :class:`Graph`.

    Lines starting with a character of ``comments`` (and ``%``) are skipped, as
    are blank lines; gzip, bzip2 and xz files are decompressed (recognised by
    content, whatever their name).

    **Vertex ids.** Ids are integers (``3``, ``+3``; not ``3.0``), exact at any
    size. By default the id space is kept: vertex ``k`` of the graph is id
    ``k`` of the file (minus 1 with ``one_based``), the vertex count is
    ``max id + 1`` (or ``num_vertices``) and unused ids become isolated
    vertices, at most ``max(2**24, 16 * edges)`` of them unless
    ``max_vertices`` allows more. With ``relabel=True`` the distinct ids are
    numbered 0..k-1 in increasing order and ``G.node_labels`` holds the
    original ids (SNAP files, whose ids are not contiguous, are best read this
    way).

    **Other formats.** Unless ``format="edgelist"``, a file that is not an
    edge list is recognised by its content: a Matrix Market banner (the first
    non-blank line, spaces allowed) reads it with :func:`read_mtx`, and a
    METIS graph (a ``.graph`` or ``.metis`` name, or a first line ``n m
    [fmt [ncon]]`` followed by exactly ``n`` adjacency lists of ids in
    ``1..n``) with :func:`read_metis`; ``directed``, ``remove_self_loops``,
    ``remove_duplicates`` and ``max_vertices`` carry over.

    An empty file (or one with only comments) gives a graph with no vertices.

    Parameters
    ----------
    path : str or PathLike
    directed : bool, optional
        Default True for an edge list (and the banner's symmetry for Matrix
        Market content, False for METIS).
    one_based : bool, default False
    weighted : bool, optional
        Default: weighted exactly when the lines have a third column.
    comments : str, default "#"
    delimiter : str, optional
        One ASCII character; default: any whitespace.
    relabel : bool, default False
    num_vertices : int, optional
    remove_self_loops, remove_duplicates : bool, default True
    max_vertices : int, optional
        The largest vertex count the file may make (see *Vertex ids*).
    format : {None, "edgelist", "mtx", "metis"}, optional
        None: recognised by content.

    Raises
    ------
    GraphFormatError
        Non-numeric or non-integer ids, negative ids (or 0 with
        ``one_based``), ragged lines, ids past ``num_vertices``, weights that
        are not finite, too many isolated vertices, binary data, lines longer
        than :data:`MAX_LINE`; the message names the line and column.

    Examples
    --------
    >>> import gunpy, os
    >>> path = os.path.join(gunpy.datasets.data_dir(), "CA-GrQc.txt")
    >>> G = gunpy.read_edgelist(path, directed=False, relabel=True)
    >>> G.num_vertices, int(G.node_labels[0])
    (5242, 13)
    """
    path = os.fspath(path)
    delimiter, num_vertices = _check_options(format, delimiter, num_vertices)
    comment_chars = "".join(dict.fromkeys((comments or "") + "%"))
    done = [0]
    blocks = _blocks(path, MAX_LINE, done)
    head = _head(blocks, done)
    auto = format is None
    if auto:
        format = _sniff(path, head[0] if head else None, len(head) < 2, delimiter,
                        comment_chars)
    if format != "edgelist":
        blocks.close()
        if format == "mtx":
            return read_mtx(path, directed=directed, remove_self_loops=remove_self_loops,
                            remove_duplicates=remove_duplicates, max_vertices=max_vertices)
        return read_metis(path, directed=bool(directed), remove_self_loops=remove_self_loops,
                          remove_duplicates=remove_duplicates)
    directed = True if directed is None else bool(directed)
    off = 1 if one_based else 0
    edges, width, keep_w = _read_lines(itertools.chain(head, blocks), done, path, comment_chars,
                                       delimiter, weighted, off, num_vertices, auto)
    if width is None:
        return Graph.from_edges([], [], num_vertices=num_vertices or 0, directed=directed)
    labels, n = _vertex_ids(edges, path, off, relabel, num_vertices, max_vertices)
    return edges.graph(n, directed=directed, mirror=not directed,
                       remove_self_loops=remove_self_loops,
                       remove_duplicates=remove_duplicates, weighted=keep_w,
                       node_labels=labels)


def _check_options(format, delimiter, num_vertices):
    if format not in (None, "edgelist", "mtx", "metis"):
        raise ValueError(f"unknown format {format!r}; valid: None, 'edgelist', 'mtx', 'metis'")
    if delimiter is not None and delimiter.isspace():
        delimiter = None
    if delimiter is not None and (len(delimiter) != 1 or not delimiter.isascii()
                                  or delimiter.isalnum() or delimiter in "+-.#%"):
        raise ValueError(f"delimiter must be one ASCII punctuation character, got {delimiter!r}")
    if num_vertices is not None:
        num_vertices = _as_count("num_vertices", num_vertices)
    return delimiter, num_vertices


def _read_lines(blocks, done, path, comment_chars, delimiter, weighted, off, num_vertices,
                metis_check):
    """The edges of an edge list's blocks: ``(edges, width or None, weights kept)``."""
    edges = _Edges(_capacity(path))
    keep_w = False
    width = first_at = None
    metis_like = None        # the first line's two numbers, and the lines after it
    for data in blocks:
        blk = _Block(data, done[0], path, comments=comment_chars, max_line=MAX_LINE,
                     delimiter=delimiter)
        done[0] += blk.newlines
        rows = np.flatnonzero(~blk.comment & (blk.tokens > 0))
        if not rows.size:
            continue
        if width is None:
            width = int(blk.tokens[rows[0]])
            first_at = blk.where(rows[0])
            if width not in (2, 3):
                raise blk.error(f"expected 'src dst' or 'src dst weight', got {width} columns: "
                                f"{_line_quote(blk, rows[0])}", rows[0])
            if weighted and width < 3:
                raise blk.error("weighted=True but the lines have no weight column", rows[0])
            keep_w = width == 3 if weighted is None else bool(weighted)
        ragged = blk.tokens[rows] != width
        if ragged.any():
            i = int(rows[np.argmax(ragged)])
            raise blk.error(f"expected {width} columns like the first edge (line {first_at}), "
                            f"got {int(blk.tokens[i])}: {_line_quote(blk, i)}", i)
        ids, w = _parse_rows(blk, rows, width, delimiter)
        if metis_like is None:
            metis_like = [int(ids[0, 0]), int(ids[0, 1]), -1]
        metis_like[2] += rows.size
        ids = _check_ids(blk, rows, ids, offset=off, limit=num_vertices,
                         limit_what=f"num_vertices={num_vertices}")
        edges.add(ids, w if keep_w else None, blk, rows)
    if metis_check and width == 2:
        a, b, after = metis_like
        if a == b == after > 0 and edges.top + off <= a:
            raise GraphFormatError(
                f"this reads as a METIS graph (a first line '{a} {b}', then {a:,} lines); "
                "read it with gunpy.io.read_metis (or name it .graph), or pass "
                "format='edgelist' to read it as an edge list", path=path, line=first_at)
    return edges, width, keep_w


def _vertex_ids(edges, path, off, relabel, num_vertices, max_vertices):
    """``(node labels or None, vertex count)``: the file's id space, or its ids relabelled."""
    if relabel:
        labels = edges.relabel() + off
        if num_vertices is not None and num_vertices != labels.size:
            raise GraphFormatError(f"num_vertices={num_vertices} but the file has "
                                   f"{labels.size:,} distinct ids", path=path)
        return labels, labels.size
    if num_vertices is not None:
        return None, num_vertices
    n = edges.top + 1
    _check_vertex_count(n, edges.m, max_vertices, path, f"the largest id, {edges.top + off},",
                        edges.top_at, hint=", or relabel=True to number the ids in use 0..k-1")
    return None, n


# ----------------------------------------------------------------------------- sniffing
def detect_format(path, *, comments="#"):
    """What a graph file holds, judged by its content: "mtx", "metis" or "edgelist".

    The rules :func:`read_edgelist` follows (a Matrix Market banner; a ``.graph``
    or ``.metis`` name, or a METIS header followed by exactly its adjacency
    lines; otherwise an edge list), for callers that pick a reader themselves.

    Examples
    --------
    >>> import gunpy, os
    >>> gunpy.io.detect_format(os.path.join(gunpy.datasets.data_dir(), "karate.mtx"))
    'mtx'
    """
    path = os.fspath(path)
    comment_chars = "".join(dict.fromkeys((comments or "") + "%"))
    done = [0]
    blocks = _blocks(path, MAX_LINE, done)
    head = _head(blocks, done)
    blocks.close()
    return _sniff(path, head[0] if head else None, len(head) < 2, None, comment_chars)


def _head(blocks, done):
    """The first block of a stream, and the second when there is one (then the first is
    not the whole file)."""
    head = [b for b in (next(blocks, None),) if b is not None]
    if head:
        done[0] = head[0].count(b"\n")
        head += [b for b in (next(blocks, None),) if b is not None]
        done[0] = 0
    return head


def _sniff(path, first, complete, delimiter, comment_chars="%"):
    """"mtx", "metis" or "edgelist": what the first block (bytes) shows (``complete``:
    the block is the whole file)."""
    if first is None:
        return "edgelist"
    blk = _Block(first, 0, path, comments=comment_chars, max_line=MAX_LINE)
    nonblank = np.flatnonzero(blk.tokens > 0)
    # a Matrix Market banner: the first non-blank line, or a comment before the first data line
    for i in nonblank:
        text = blk.text(int(i)).strip().lower()
        if text.startswith(b"%%matrixmarket"):
            return "mtx"
        if not blk.comment[i]:
            break
    if path.lower().endswith((".graph", ".metis", ".graph.gz", ".metis.gz")):
        return "metis"
    if delimiter is None and _looks_like_metis(blk, complete=complete):
        return "metis"
    return "edgelist"
