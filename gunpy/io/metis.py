"""METIS graph files (``.graph``: gpmetis, KaHIP)."""

import os
import re

import numpy as np

from gunpy.errors import GraphFormatError, quote
from gunpy.io._edges import _Edges
from gunpy.io._text import (METIS_MAX_LINE, _EXACT_FLOAT, _bad_token, _capacity,
                            _fromstring, _line_quote, _stream)

__all__ = ["read_metis"]


def _metis_header(tokens):
    """``(n, m, skip, per)`` from a METIS header's tokens, or None when they are not one.

    ``skip``: the vertex size and weights that open each line; ``per``: tokens
    per neighbour (2 with edge weights).
    """
    if not 2 <= len(tokens) <= 4 or not all(re.fullmatch(rb"[0-9]+", t) for t in tokens):
        return None
    n, m = int(tokens[0]), int(tokens[1])
    fmt = tokens[2].decode() if len(tokens) > 2 else "0"
    if len(fmt) > 3 or set(fmt) - {"0", "1"}:
        return None
    fmt = fmt.rjust(3, "0")
    ncon = int(tokens[3]) if len(tokens) > 3 else 1
    if len(tokens) > 3 and fmt[1] != "1" or ncon < 1:
        return None
    skip = (fmt[0] == "1") + (ncon if fmt[1] == "1" else 0)
    return n, m, skip, 2 if fmt[2] == "1" else 1


def _looks_like_metis(blk, complete):
    """Whether a block (the whole file when ``complete``) is a METIS graph's start.

    Complete: the header's ``n`` adjacency lines and ``2m`` neighbours exactly,
    ids in 1..n, no vertex naming itself. Partial: the same within the
    block, and some sign an edge list cannot show (a blank line among the
    lists, or lines of different lengths).
    """
    lines = np.flatnonzero(~blk.comment)
    nonblank = lines[blk.tokens[lines] > 0]
    if not nonblank.size:
        return False
    h = int(nonblank[0])
    header = _metis_header(blk.text(h).split())
    if header is None:
        return False
    n, m, skip, per = header
    body = lines[lines > h]
    if complete:
        while body.size > n and blk.tokens[body[-1]] == 0:
            body = body[:-1]              # blank lines at the end
        if body.size != n:
            return False
    elif body.size > n or body.size == 0:
        return False
    t = blk.tokens[body]
    if ((t < skip) | ((t - skip) % per != 0)).any():
        return False
    nbrs = (t - skip) // per
    if nbrs.sum() > 2 * m or (complete and nbrs.sum() != 2 * m):
        return False
    if not complete and not ((t == 0).any() or (t != t[0]).any()):
        return False
    vals = _fromstring(blk.select(blk.starts[body], np.minimum(blk.ends[body] + 1, blk.b.size)),
                       np.int64, int(t.sum()), None)
    if vals is None:
        return False
    rank = np.arange(vals.size) - np.repeat(np.cumsum(t) - t, t)
    ids = vals[(rank >= skip) & ((rank - skip) % per == 0)]
    own = np.repeat(np.arange(1, body.size + 1), nbrs)
    return bool(ids.size == 0 or (ids.min() >= 1 and ids.max() <= n and (ids != own).all()))

def read_metis(path, *, directed=False, remove_self_loops=True, remove_duplicates=True):
    """Read a METIS graph file (``.graph``, as gpmetis and KaHIP read) into a :class:`Graph`.

    The first non-comment line is the header ``n m [fmt [ncon]]``; then line
    ``i`` (blank for an isolated vertex) lists vertex ``i``'s neighbours,
    1-based, each edge at both of its ends. ``fmt`` (up to three 0/1 digits)
    says whether each line opens with a vertex size and ``ncon`` vertex
    weights (read and ignored) and whether each neighbour is followed by an
    edge weight (the graph is then weighted). ``%`` lines are comments.

    Parameters
    ----------
    path : str or PathLike
    directed : bool, default False
        METIS graphs are undirected (each line lists all of a vertex's edges);
        True keeps the listed arcs as a directed graph.
    remove_self_loops, remove_duplicates : bool, default True

    Raises
    ------
    GraphFormatError
        A bad header, a line of the wrong shape, ids out of ``1..n``, fewer or
        more than ``n`` lines or ``2m`` neighbours, lists that disagree (``u``
        names ``v`` but ``v`` does not name ``u``) when ``directed=False``.

    Examples
    --------
    >>> import gunpy, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "square.graph")
    >>> with open(path, "w") as f:
    ...     _ = f.write("4 4\\n2 4\\n1 3\\n2 4\\n1 3\\n")
    >>> G = gunpy.io.read_metis(path)
    >>> G.num_vertices, G.num_edges // 2, G.directed
    (4, 4, False)
    """
    path = os.fspath(path)
    header = None
    v = 0                    # vertex lines read
    entries = 0
    last_line = None
    weighted = False
    edges = _Edges(_capacity(path))
    for blk in _stream(path, METIS_MAX_LINE, comments="%"):
        lines = np.flatnonzero(~blk.comment)
        if header is None:
            nonblank = lines[blk.tokens[lines] > 0]
            if not nonblank.size:
                continue
            h = int(nonblank[0])
            header = _metis_header(blk.text(h).split())
            if header is None:
                raise blk.error(f"bad METIS header {_line_quote(blk, h)}; expected "
                                "'vertices edges [fmt [ncon]]'", h)
            n, m, skip, per = header
            weighted = per == 2
            last_line = blk.where(h)
            lines = lines[lines > h]
        if v + lines.size > n:
            extra = lines[n - v:]
            if (blk.tokens[extra] > 0).any():
                i = int(extra[np.argmax(blk.tokens[extra] > 0)])
                raise blk.error(f"more than the {n:,} vertex lines the header declares", i)
            lines = lines[:n - v]
        if not lines.size:
            continue
        src, ids, w = _adjacency(blk, lines, v, header, path)
        edges.add(np.stack([src, ids - 1], axis=1), w)
        entries += ids.size
        v += lines.size
        last_line = blk.where(lines[-1])
    if header is None:
        raise GraphFormatError("empty METIS file (no header)", path=path)
    if v < n:
        raise GraphFormatError(f"truncated file: the header declares {n:,} vertices, found "
                               f"{v:,} lines", path=path, line=last_line)
    if entries != 2 * m:
        raise GraphFormatError(f"the header declares {m:,} edges ({2 * m:,} list entries), the "
                               f"lists hold {entries:,}", path=path, line=last_line)
    G = edges.graph(n, directed=True, mirror=False, remove_self_loops=remove_self_loops,
                    remove_duplicates=remove_duplicates, weighted=weighted)
    if not directed:
        _check_symmetric(G, path)
        G.directed = False
    return G


def _adjacency(blk, lines, v, header, path):
    """``(sources, neighbours 1-based, weights or None)`` of the block's vertex lines
    ``lines``, the first of which is vertex ``v`` (0-based)."""
    n, _, skip, per = header
    t = blk.tokens[lines]
    bad = (t < skip) | ((t - skip) % per != 0)
    if bad.any():
        i = int(lines[np.argmax(bad)])
        raise blk.error(f"vertex {v + int(np.argmax(bad)) + 1}'s line holds "
                        f"{int(blk.tokens[i])} numbers; the header's format needs {skip} "
                        f"then {'pairs (neighbour, weight)' if per == 2 else 'neighbours'}", i)
    total = int(t.sum())
    vals = _fromstring(blk.select(blk.starts[lines], np.minimum(blk.ends[lines] + 1, blk.b.size)),
                       np.int64, total, None)
    if vals is None:
        raise _bad_token(blk, lines[t > 0], ["int"], "vertex id")
    rank = np.arange(total) - np.repeat(np.cumsum(t) - t, t)     # each token's place in its line
    is_nbr = (rank >= skip) & ((rank - skip) % per == 0)
    ids = vals[is_nbr]
    bad = (ids < 1) | (ids > n)
    if bad.any():
        j = int(np.flatnonzero(is_nbr)[np.argmax(bad)])
        tok, line, col = blk.token(int(np.repeat(blk.tfirst[lines], t)[j] + rank[j]))
        raise GraphFormatError(f"neighbour {quote(tok)} is out of range 1..{n:,}", path=path,
                               line=line, column=col)
    src = np.repeat(np.arange(v, v + lines.size, dtype=np.int64), (t - skip) // per)
    w = None
    if per == 2:
        wi = vals[(rank >= skip) & ((rank - skip) % per == 1)]
        big = np.abs(wi) > _EXACT_FLOAT
        if big.any():
            raise blk.error(f"edge weight {int(wi[np.argmax(big)])} is past +-2**53 (not exact "
                            "as a float64)", int(lines[0]))
        w = wi.astype(np.float64)
    return src, ids, w


def _check_symmetric(G, path):
    """Refuse a METIS graph whose lists disagree (u names v, v does not name u)."""
    from gunpy._csr import transpose_csr
    ro, ci = G.row_offsets, G.column_indices
    in_off, in_idx, in_eid = transpose_csr(ro, ci, G.num_vertices)
    if np.array_equal(in_off, ro) and np.array_equal(in_idx, ci) and (
            G.values is None or np.array_equal(G.values[in_eid], G.values)):
        return
    if not np.array_equal(in_off, ro):
        u = int(np.argmax(np.diff(in_off) != np.diff(ro)))
    else:
        differ = (in_idx != ci) if not np.array_equal(in_idx, ci) else \
            (G.values[in_eid] != G.values)
        u = int(np.searchsorted(ro, np.argmax(differ), side="right")) - 1
    out_nb = set(ci[ro[u]:ro[u + 1]].tolist())
    in_nb = set(in_idx[in_off[u]:in_off[u + 1]].tolist())
    if out_nb - in_nb:
        x = min(out_nb - in_nb)
        msg = f"vertex {u + 1} lists {x + 1}, but vertex {x + 1} does not list {u + 1}"
    elif in_nb - out_nb:
        x = min(in_nb - out_nb)
        msg = f"vertex {x + 1} lists {u + 1}, but vertex {u + 1} does not list {x + 1}"
    else:
        msg = f"the edges of vertex {u + 1} differ in weight or count at their other ends"
    raise GraphFormatError(f"the adjacency lists disagree: {msg} (METIS lists every edge at "
                           "both ends; directed=True reads the lists as arcs)", path=path)
