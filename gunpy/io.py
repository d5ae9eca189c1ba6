"""Reading graphs: Matrix Market (with or without banner) and edge lists (SNAP, gzip).

Both readers work on the whole file at once with NumPy: the bytes are
classified (whitespace, newline, comment line) in bulk, tokens are counted per
line with one ``bincount`` (so a ragged line is found and named without a
Python loop), and the numbers are parsed in one call. Only when that bulk parse
fails does a slow scan look for the first bad line to name it in the error.
Loading ``email-Enron.txt`` (367,662 lines, 3.7 MB) takes about 0.1 s.

Errors are :class:`gunpy.GraphFormatError` (a ``ValueError``) naming the file
and the 1-based line.
"""

import gzip
import os
import warnings

import numpy as np

from gunpy.errors import GraphFormatError
from gunpy.graph import Graph

__all__ = ["read_mtx", "read_edgelist"]

_MAX_EXACT = 2.0 ** 53


def _read_bytes(path):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, "rb") as f:
        head = f.read(2)
    try:
        if head == b"\x1f\x8b" or path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (EOFError, gzip.BadGzipFile, OSError) as exc:
        raise GraphFormatError(f"truncated or corrupt gzip file ({exc})", path=path) from exc


# bytes that separate tokens: space, tab, CR, LF
_WS = np.zeros(256, dtype=bool)
_WS[[32, 9, 13, 10]] = True


class _Lines:
    """Line structure of a text file, computed in bulk."""

    def __init__(self, raw, path, delimiter):
        self.raw = raw
        self.path = path
        b = np.frombuffer(raw, dtype=np.uint8)
        if b.size and b.max() > 127:
            bad = int(np.flatnonzero(b > 127)[0])
            raise GraphFormatError("non-ASCII byte in file", path=path,
                                   line=int(np.count_nonzero(b[:bad] == 10)) + 1)
        self.b = b
        nlpos = np.flatnonzero(b == 10)
        self.nlines = nlpos.size + (1 if b.size and b[-1] != 10 else 0)
        # where each line starts
        starts = np.empty(nlpos.size + 1, dtype=np.int64)
        starts[0] = 0
        np.add(nlpos, 1, out=starts[1:])
        self.starts = starts[:self.nlines]
        ws_table = _WS
        if delimiter and len(delimiter) == 1 and not delimiter.isspace():
            ws_table = _WS.copy()
            ws_table[ord(delimiter)] = True
        ws = ws_table[b]
        tstart = ~ws            # token starts: a token byte after a separator
        tstart[1:] &= ws[:-1]
        pos = np.flatnonzero(tstart)
        # the line of each token start: the newlines before it
        lines = np.searchsorted(nlpos, pos)
        self.tokens = np.bincount(lines, minlength=self.nlines)[:self.nlines]
        first = np.full(self.nlines, 32, dtype=np.uint8)
        # first non-blank byte of every line (for comment detection)
        if pos.size:
            keep = np.empty(pos.size, dtype=bool)
            keep[0] = True
            np.not_equal(lines[1:], lines[:-1], out=keep[1:])
            first[lines[keep]] = b[pos[keep]]
        self.first = first

    def comment_mask(self, chars):
        m = np.zeros(self.nlines, dtype=bool)
        for ch in chars:
            m |= self.first == ord(ch)
        return m

    def text_of(self, line_mask):
        """The text of the selected lines (comment lines removed in bulk)."""
        keep = np.repeat(line_mask, np.diff(self.starts, append=self.b.size))
        return self.b[keep].tobytes().decode("ascii")

    def line(self, i):
        end = self.starts[i + 1] if i + 1 < self.nlines else len(self.raw)
        return self.raw[self.starts[i]:end].decode("ascii", "replace").rstrip("\r\n")


def _parse_numbers(lines, data_mask, ncols, path, delimiter=None):
    """Parse the data lines (``ncols`` tokens each) into a float64 (rows, ncols) array."""
    text = lines.text_of(data_mask)
    if delimiter not in (None, " ", "\t"):
        text = text.replace(delimiter, " ")
    # fast path: numpy's C parser; it raises on anything that is not a number,
    # and a token it would split in two (``1-2``) changes the count, so a
    # result with one number per token is the one the slow path gives
    vals = None
    try:
        with warnings.catch_warnings():
            # NumPy 1.x warns (and stops early) where 2.x raises
            warnings.simplefilter("error", DeprecationWarning)
            vals = np.fromstring(text, dtype=np.float64, sep=" ")
    except (ValueError, DeprecationWarning):
        pass
    if vals is None or vals.size != int(lines.tokens[data_mask].sum()):
        vals = _parse_tokens(lines, data_mask, text, path, delimiter)
    if not np.all(np.isfinite(vals)):
        bad = int(np.flatnonzero(~np.isfinite(vals))[0]) // ncols
        line = int(np.flatnonzero(data_mask)[bad]) + 1
        raise GraphFormatError("NaN or infinite value", path=path, line=line)
    return vals.reshape(-1, ncols)


def _parse_tokens(lines, data_mask, text, path, delimiter):
    tokens = text.split()
    try:
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        # slow path, only to name the first bad line
        for i in np.flatnonzero(data_mask):
            for t in lines.line(i).replace(delimiter or " ", " ").split():
                try:
                    float(t)
                except ValueError:
                    raise GraphFormatError(f"not a number: {t!r}", path=path, line=int(i) + 1)
        raise GraphFormatError("could not parse the numbers", path=path)


def _ids(col, name, path, data_lines, *, offset):
    """Integer vertex ids from a float column, shifted by ``offset``; names bad lines."""
    bad = (col != np.floor(col)) | (np.abs(col) >= _MAX_EXACT)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise GraphFormatError(f"{name} {col[i]!r} is not an integer vertex id", path=path,
                               line=int(data_lines[i]) + 1)
    ids = col.astype(np.int64) - offset
    if ids.size and ids.min() < 0:
        i = int(np.flatnonzero(ids < 0)[0])
        what = "0 is not a valid 1-based id" if offset == 1 and col[i] == 0 else \
            f"negative vertex id {int(col[i])}"
        raise GraphFormatError(what, path=path, line=int(data_lines[i]) + 1)
    return ids


# ----------------------------------------------------------------------------- Matrix Market
def read_mtx(path, *, directed=None, remove_self_loops=True, remove_duplicates=True):
    """Read a Matrix Market coordinate file into a :class:`Graph`.

    Handles ``pattern`` / ``real`` / ``integer`` fields, ``general`` /
    ``symmetric`` symmetry, and files without the ``%%MatrixMarket`` banner
    (first line ``rows cols nnz``, then 1-based entries, weighted when they have
    three columns; such files are read as directed). Entry ``(i, j)`` is the
    edge ``i-1 -> j-1``.

    Parameters
    ----------
    path : str or PathLike
    directed : bool, optional
        Default: undirected exactly when the banner says ``symmetric``.
    remove_self_loops, remove_duplicates : bool, default True

    Raises
    ------
    GraphFormatError
        Bad banner, size line or entry (the message names the line), an entry
        count that differs from the size line, indices out of range.
    FileNotFoundError

    Examples
    --------
    >>> import gunpy, os
    >>> G = gunpy.read_mtx(os.path.join(gunpy.datasets.data_dir(), "karate.mtx"))
    >>> G.num_vertices, G.num_edges // 2
    (34, 78)
    """
    raw = _read_bytes(path)
    lines = _Lines(raw, path, None)
    if lines.nlines == 0 or not lines.tokens.any():
        raise GraphFormatError("empty Matrix Market file", path=path)
    banner, field, symmetry = _mtx_banner(lines.line(0), path)
    content = np.flatnonzero(~lines.comment_mask("%") & (lines.tokens > 0))
    nrows, nnz, size_line = _mtx_sizes(lines, content, path)
    entries = content[1:]
    if not banner:
        width = int(lines.tokens[entries[0]]) if entries.size else 2
        field = "real" if width == 3 else "pattern"
    width = 2 if field == "pattern" else 3
    ragged = entries[lines.tokens[entries] != width]
    if ragged.size:
        i = int(ragged[0])
        raise GraphFormatError(f"expected {width} numbers per entry ({field}), got "
                               f"{int(lines.tokens[i])}: {lines.line(i)!r}", path=path, line=i + 1)
    if entries.size != nnz:
        what = "truncated file" if entries.size < nnz else "more entries than declared"
        raise GraphFormatError(f"{what}: the size line declares {nnz} entries, found "
                               f"{entries.size}", path=path,
                               line=(int(entries[-1]) + 1) if entries.size else size_line + 1)
    mask = np.zeros(lines.nlines, dtype=bool)
    mask[entries] = True
    vals = _parse_numbers(lines, mask, width, path) if nnz else np.zeros((0, width))
    src = _ids(vals[:, 0], "row", path, entries, offset=1)
    dst = _ids(vals[:, 1], "column", path, entries, offset=1)
    big = (src >= nrows) | (dst >= nrows)
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise GraphFormatError(f"index out of range for a {nrows} x {nrows} matrix: "
                               f"{lines.line(entries[i])!r}", path=path, line=int(entries[i]) + 1)
    weights = vals[:, 2].copy() if width == 3 else None
    if directed is None:
        directed = symmetry != "symmetric"
    return Graph.from_edges(src, dst, weights, num_vertices=nrows, directed=directed,
                            remove_self_loops=remove_self_loops,
                            remove_duplicates=remove_duplicates)


def _mtx_banner(first_line, path):
    """(has a banner, field, symmetry) from a Matrix Market file's first line."""
    if not first_line.startswith("%%"):
        return False, "real", "general"
    parts = first_line.split()
    if len(parts) != 5 or parts[0].lower() != "%%matrixmarket" or parts[1].lower() != "matrix":
        raise GraphFormatError(f"bad banner {first_line!r}; expected '%%MatrixMarket "
                               "matrix coordinate <field> <symmetry>'", path=path, line=1)
    fmt, field, symmetry = (p.lower() for p in parts[2:])
    if fmt != "coordinate":
        raise GraphFormatError(f"only coordinate (sparse) files hold graphs, not {fmt!r}",
                               path=path, line=1)
    if field not in ("pattern", "real", "integer", "double"):
        raise GraphFormatError(f"unsupported field {field!r} (pattern, real or integer)",
                               path=path, line=1)
    if symmetry not in ("general", "symmetric"):
        raise GraphFormatError(f"unsupported symmetry {symmetry!r} (general or symmetric)",
                               path=path, line=1)
    return True, field, symmetry


def _mtx_sizes(lines, content, path):
    """(vertices, entries, the size line's index) from the first line that is not a comment."""
    if content.size == 0:
        raise GraphFormatError("no size line", path=path)
    size_line = int(content[0])
    sizes = lines.line(size_line).split()
    try:
        if len(sizes) != 3:
            raise ValueError
        nrows, ncols, nnz = (int(t) for t in sizes)
        if min(nrows, ncols, nnz) < 0:
            raise ValueError
    except ValueError:
        raise GraphFormatError(f"bad size line {lines.line(size_line)!r}; expected "
                               "'rows cols entries'", path=path, line=size_line + 1) from None
    if nrows != ncols:
        raise GraphFormatError(f"adjacency matrix must be square, got {nrows} x {ncols}",
                               path=path, line=size_line + 1)
    return nrows, nnz, size_line


# ----------------------------------------------------------------------------- edge lists
def read_edgelist(path, *, directed=True, one_based=False, weighted=None, comments="#",
                  delimiter=None, relabel=False, num_vertices=None, remove_self_loops=True,
                  remove_duplicates=True):
    """Read an edge list (``src dst [weight]`` per line) into a :class:`Graph`.

    Lines starting with a character of ``comments`` (and ``%``) are skipped, as
    are blank lines; ``.gz`` files (or gzip content) are decompressed.

    **Vertex ids.** By default the id space is kept: vertex ``k`` of the graph
    is id ``k`` of the file (minus 1 with ``one_based``), the vertex count is
    ``max id + 1`` (or ``num_vertices``) and unused ids become isolated
    vertices. With ``relabel=True`` the distinct ids are numbered 0..k-1 in
    increasing order and ``G.node_labels`` holds the original ids (SNAP files,
    whose ids are not contiguous, are best read this way).

    An empty file (or one with only comments) gives a graph with no vertices.

    Parameters
    ----------
    path : str or PathLike
    directed : bool, default True
    one_based : bool, default False
    weighted : bool, optional
        Default: weighted exactly when the lines have a third column.
    comments : str, default "#"
    delimiter : str, optional
        Default: any whitespace.
    relabel : bool, default False
    num_vertices : int, optional
    remove_self_loops, remove_duplicates : bool, default True

    Raises
    ------
    GraphFormatError
        Non-numeric or non-integer ids, negative ids (or 0 with ``one_based``),
        ragged lines, ids past ``num_vertices``; the message names the line.

    Examples
    --------
    >>> import gunpy, os
    >>> path = os.path.join(gunpy.datasets.data_dir(), "CA-GrQc.txt")
    >>> G = gunpy.read_edgelist(path, directed=False, relabel=True)
    >>> G.num_vertices, int(G.node_labels[0])
    (5242, 13)
    """
    raw = _read_bytes(path)
    lines = _Lines(raw, path, delimiter)
    comment = lines.comment_mask((comments or "") + "%")
    data = np.flatnonzero(~comment & (lines.tokens > 0))
    if data.size == 0:
        return Graph.from_edges([], [], num_vertices=num_vertices or 0, directed=directed)
    width = int(lines.tokens[data[0]])
    if width not in (2, 3):
        raise GraphFormatError(f"expected 'src dst' or 'src dst weight', got {width} columns: "
                               f"{lines.line(data[0])!r}", path=path, line=int(data[0]) + 1)
    ragged = data[lines.tokens[data] != width]
    if ragged.size:
        i = int(ragged[0])
        raise GraphFormatError(f"expected {width} columns like the first edge, got "
                               f"{int(lines.tokens[i])}: {lines.line(i)!r}", path=path,
                               line=i + 1)
    mask = np.zeros(lines.nlines, dtype=bool)
    mask[data] = True
    vals = _parse_numbers(lines, mask, width, path, delimiter)
    off = 1 if one_based else 0
    src = _ids(vals[:, 0], "source", path, data, offset=off)
    dst = _ids(vals[:, 1], "target", path, data, offset=off)
    if weighted is None:
        weighted = width == 3
    if weighted and width < 3:
        raise GraphFormatError("weighted=True but the lines have no weight column", path=path,
                               line=int(data[0]) + 1)
    weights = vals[:, 2].copy() if weighted else None
    labels = None
    if relabel:
        labels, inverse = np.unique(np.concatenate([src, dst]), return_inverse=True)
        src, dst = inverse[:src.size], inverse[src.size:]
        labels = labels + off
        if num_vertices is not None and num_vertices != labels.size:
            raise GraphFormatError(f"num_vertices={num_vertices} but the file has "
                                   f"{labels.size} distinct ids", path=path)
    elif num_vertices is not None:
        big = (src >= num_vertices) | (dst >= num_vertices)
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise GraphFormatError(f"vertex id out of range for num_vertices={num_vertices}",
                                   path=path, line=int(data[i]) + 1)
    return Graph.from_edges(src, dst, weights,
                            num_vertices=labels.size if relabel else num_vertices,
                            directed=directed, remove_self_loops=remove_self_loops,
                            remove_duplicates=remove_duplicates, node_labels=labels)
