"""Matrix Market coordinate files."""

import os

import numpy as np

from gunpy.errors import GraphFormatError, quote
from gunpy.io._edges import _Edges
from gunpy.io._text import (_INT64_MAX, _INT_RE, MAX_LINE, MIN_EDGE_BYTES, _capacity,
                            _check_ids, _check_vertex_count, _line_quote, _parse_rows,
                            _plain_size, _stream)

__all__ = ["read_mtx"]


def read_mtx(path, *, directed=None, remove_self_loops=True, remove_duplicates=True,
             max_vertices=None):
    """Read a Matrix Market coordinate file into a :class:`Graph`.

    Handles ``pattern`` / ``real`` / ``integer`` fields, ``general`` /
    ``symmetric`` symmetry, and files without the ``%%MatrixMarket`` banner
    (first line ``rows cols nnz``, then 1-based entries, weighted when they have
    three columns; such files are read as directed). Entry ``(i, j)`` is the
    edge ``i-1 -> j-1``. The banner may follow blank lines or comments and
    start after spaces; the file may be gzip, bzip2 or xz compressed.

    Parameters
    ----------
    path : str or PathLike
    directed : bool, optional
        Default: undirected exactly when the banner says ``symmetric``. Each
        entry of a ``symmetric`` file stands for both directions whatever
        ``directed`` says (``directed=True`` stores both).
    remove_self_loops, remove_duplicates : bool, default True
    max_vertices : int, optional
        The largest vertex count accepted. By default the size line may
        declare at most ``max(2**24, 16 * entries)`` vertices: more would be
        mostly isolated vertices, 8 bytes of row offsets each, so a short
        file cannot ask for gigabytes by mistake or malice.

    Raises
    ------
    GraphFormatError
        Bad banner, size line or entry (the message names the line and
        column), an entry count that differs from the size line, indices out
        of range, weights that are not finite (or, in an ``integer`` file,
        beyond +-2**53), a vertex count past ``max_vertices``, binary data.
    FileNotFoundError

    Examples
    --------
    >>> import gunpy, os
    >>> G = gunpy.read_mtx(os.path.join(gunpy.datasets.data_dir(), "karate.mtx"))
    >>> G.num_vertices, G.num_edges // 2
    (34, 78)
    """
    path = os.fspath(path)
    (banner, field, symmetry), size, width, edges = _read_entries(path, max_vertices)
    if directed is None:
        directed = symmetry != "symmetric"
    weighted = width == 3 if width is not None else bool(banner) and field != "pattern"
    return edges.graph(size[0], directed=directed,
                       mirror=symmetry == "symmetric" or not directed,
                       remove_self_loops=remove_self_loops,
                       remove_duplicates=remove_duplicates, weighted=weighted)


def _read_entries(path, max_vertices):
    """``((banner, field, symmetry), (vertices, entries), width, edges)`` of a file."""
    banner = None            # None: not seen yet; False: a file without one
    field, symmetry = "real", "general"
    size = None              # (vertices, entries) once the size line is read
    width = edges = last_line = None
    found = 0
    for blk in _stream(path, MAX_LINE, comments="%"):
        content = np.flatnonzero(~blk.comment & (blk.tokens > 0))
        if size is None:
            stop = int(content[0]) if content.size else blk.nlines
            if banner is None:
                banner, field, symmetry = _mtx_banner(blk, stop)
            if not content.size:
                continue
            size, edges = _size_line(blk, int(content[0]), path, max_vertices)
            size_line = last_line = blk.where(content[0])
            content = content[1:]
            if not content.size:
                continue
        if width is None:
            if banner:
                width = 2 if field == "pattern" else 3
            else:
                width = int(blk.tokens[content[0]])
                field = "real" if width == 3 else "pattern"
        ragged = blk.tokens[content] != width
        if ragged.any():
            i = int(content[np.argmax(ragged)])
            raise blk.error(f"expected {width} numbers per entry ({field}), got "
                            f"{int(blk.tokens[i])}: {_line_quote(blk, i)}", i)
        if found + content.size > size[1]:
            i = int(content[size[1] - found])
            raise blk.error(f"more entries than declared: the size line (line {size_line}) "
                            f"declares {size[1]:,}", i)
        ids, w = _parse_rows(blk, content, width, None, what="index",
                             integer_weights=field == "integer")
        ids = _check_ids(blk, content, ids, offset=1, limit=size[0],
                         limit_what=f"a {size[0]:,} x {size[0]:,} matrix")
        edges.add(ids, w)
        found += content.size
        last_line = blk.where(content[-1])
    if size is None:
        raise GraphFormatError("empty Matrix Market file (no size line)", path=path)
    if found < size[1]:
        raise GraphFormatError(f"truncated file: the size line declares {size[1]:,} entries, "
                               f"found {found:,}", path=path, line=last_line)
    return (banner, field, symmetry), size, width, edges


def _size_line(blk, i, path, max_vertices):
    """The size line's ``(vertices, entries)``, checked against what the file can hold,
    and the edge store sized for it."""
    size = _mtx_size(blk, i)
    _check_vertex_count(size[0], size[1], max_vertices, path, "the size line", blk.where(i))
    room = _plain_size(path)
    if room is not None and size[1] > room // MIN_EDGE_BYTES + 1:
        raise blk.error(f"the size line declares {size[1]:,} entries, more than a file "
                        f"of {room:,} bytes can hold", i)
    return size, _Edges(_capacity(path, size[1]))


def _mtx_banner(blk, stop):
    """(has a banner, field, symmetry) from the lines before the size line (index ``stop``).

    The banner is the first non-blank line when that line starts with ``%%``
    (after any spaces), or any comment line before the size line that starts
    with ``%%MatrixMarket``.
    """
    candidates = np.flatnonzero(blk.tokens[:stop] > 0)
    if not candidates.size:
        if stop == blk.nlines:
            return None, "real", "general"    # only blank lines so far
        return False, "real", "general"
    line = None
    first = blk.text(int(candidates[0])).strip()
    if first.startswith(b"%%"):
        line = int(candidates[0])
    else:
        for i in candidates[1:]:
            if blk.text(int(i)).strip().lower().startswith(b"%%matrixmarket"):
                line = int(i)
                break
    if line is None:
        return False, "real", "general"
    text = blk.text(line).strip()
    parts = text.split()
    if len(parts) != 5 or parts[0].lower() != b"%%matrixmarket" or parts[1].lower() != b"matrix":
        raise blk.error(f"bad banner {quote(text)}; expected '%%MatrixMarket matrix "
                        "coordinate <field> <symmetry>'", line)
    fmt, field, symmetry = (p.lower().decode("ascii") for p in parts[2:])
    if fmt != "coordinate":
        raise blk.error(f"only coordinate (sparse) files hold graphs, not {quote(fmt)}", line)
    if field not in ("pattern", "real", "integer", "double"):
        raise blk.error(f"unsupported field {quote(field)} (pattern, real or integer)", line)
    if symmetry not in ("general", "symmetric"):
        raise blk.error(f"unsupported symmetry {quote(symmetry)} (general or symmetric)", line)
    return True, field, symmetry


def _mtx_size(blk, i):
    """(vertices, entries) from the size line, the block's line ``i``."""
    sizes = blk.text(i).split()
    try:
        if len(sizes) != 3 or not all(_INT_RE.match(t) for t in sizes):
            raise ValueError
        nrows, ncols, nnz = (int(t) for t in sizes)
        if min(nrows, ncols, nnz) < 0 or max(nrows, nnz) > _INT64_MAX // 2:
            raise ValueError
    except ValueError:
        raise blk.error(f"bad size line {_line_quote(blk, i)}; expected 'rows cols entries'",
                        i) from None
    if nrows != ncols:
        raise blk.error(f"adjacency matrix must be square, got {nrows:,} x {ncols:,}", i)
    return nrows, nnz
