"""Reading graphs: Matrix Market, edge lists (SNAP, CSV) and METIS, streamed.

Every reader takes the file in blocks of whole lines (:data:`BLOCK`, 1 MiB;
gzip, bzip2 and xz decompressed as they are read), works on each block in
bulk with NumPy (newlines, token starts and comment lines found at once,
tokens counted per line by one ``searchsorted``, ids parsed as 64-bit
integers by one C call, weights as floats), and keeps only the edges it
read, in two id arrays (int32 while the ids fit) grown in place. The CSR is
then built from them by :func:`gunpy._csr.build_csr`'s counting sort, which
writes the final arrays directly (an undirected graph's reversed edges
included, never materialised), so memory follows the edges kept, not the
size of the text: about twice the final graph for an undirected graph,
three times for a directed one (whose CSR keeps only the targets), plus a
fixed ~25 MB for one block.

What the file holds is checked before it is trusted:

* a line may hold at most :data:`MAX_LINE` bytes (:data:`METIS_MAX_LINE` for
  METIS adjacency lines); a control byte (NUL, ...) outside whitespace, or a
  non-ASCII byte outside a comment, ends the read as "not text";
* ids are integers (``1.0``, ``1e3`` and ``0x10`` are not), exact at any size,
  in range; weights are finite;
* a vertex count the file declares (Matrix Market's size line) or implies (an
  edge list's largest id) may not exceed ``max(2**24, 16 * edges)`` unless
  ``max_vertices`` allows it, so a 75-byte header cannot ask for gigabytes;
* the format is recognised by content: :func:`read_edgelist` reads a file
  with a Matrix Market banner (after blank lines or spaces too) as Matrix
  Market and a METIS graph (``.graph``, or a ``n m`` header followed by ``n``
  adjacency lines) as METIS.

Errors are :class:`gunpy.GraphFormatError` (a ``ValueError``), one line that
names the file, the 1-based line and column, and quotes at most 100
characters of it.
"""

import bz2
import gzip
import itertools
import lzma
import os
import re
import warnings
import zlib

import numpy as np

from gunpy.errors import GraphFormatError, quote
from gunpy.graph import Graph, _index_dtype

__all__ = ["read_mtx", "read_edgelist", "read_metis", "detect_format", "MAX_LINE",
           "METIS_MAX_LINE"]

#: Bytes read (after decompression) per block (the fixed buffer: ~25 MB of arrays per block).
BLOCK = 1 << 20
#: Longest line (bytes) of an edge list or Matrix Market file.
MAX_LINE = 1 << 16
#: Longest METIS line: a vertex's whole adjacency list is one line.
METIS_MAX_LINE = 1 << 28
#: A file may make this many vertices whatever its edge count (2**24: 128 MiB of offsets) ...
FREE_VERTICES = 1 << 24
#: ... and this many per edge it holds; more needs ``max_vertices``.
VERTICES_PER_EDGE = 16
#: Fewest bytes an edge takes in a text file ("1 2\n"): a plain file of S bytes holds at
#: most S / 4 edges, which bounds the edge arrays allocated up front.
MIN_EDGE_BYTES = 4

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min
_EXACT_FLOAT = 2.0 ** 53

# byte classes: 0 text, 1 non-ASCII (allowed in comments), 2 control byte (never allowed)
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[128:] = 1
_CLASS[:32] = 2
_CLASS[[9, 10, 13]] = 0
_INT_RE = re.compile(rb"[+-]?[0-9]+\Z")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z"
                       rb"|[+-]?(?:nan|inf|infinity)\Z", re.IGNORECASE)

_CODECS = ((b"\x1f\x8b", "gzip", gzip.open), (b"BZh", "bzip2", bz2.open),
           (b"\xfd7zXZ\x00", "xz", lzma.open))
_ARCHIVES = ((b"PK\x03\x04", "zip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"\x93NUMPY", "NumPy"))


# ----------------------------------------------------------------------------- the text
def _blocks(path, max_line, lines_done=None):
    """Yield blocks (bytes) of whole lines of ``path``.

    Compressed files (by content, whatever the name) are decompressed as they
    are read; a line longer than ``max_line`` bytes ends the read.
    ``lines_done`` (a one-item list the consumer keeps up to date: lines before
    the next block) numbers the line of that error.
    """
    lines_done = [0] if lines_done is None else lines_done
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory, not a graph file")
    with open(path, "rb") as f:
        head = f.read(8)
    opener, codec = open, None
    for magic, name, fn in _CODECS:
        if head.startswith(magic):
            opener, codec = fn, name
    for magic, name in _ARCHIVES:
        if head.startswith(magic):
            raise GraphFormatError(f"a {name} file, not a text graph file"
                                   + ("; extract the graph file first" if name != "NumPy"
                                      else ""), path=path)
    parts, pending = [], 0      # the start of a line that has not ended yet
    first = True
    with opener(path, "rb") as f:
        while True:
            try:
                data = f.read(BLOCK)
            except (EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
                raise GraphFormatError(f"truncated or corrupt {codec or 'file'} data ({exc})",
                                       path=path) from None
            if first:
                first = False
                if data.startswith(b"\xef\xbb\xbf"):
                    data = data[3:]          # a UTF-8 byte-order mark
            if not data:
                if parts:
                    yield b"".join(parts)
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                parts.append(data)
                pending += len(data)
                if pending > max_line:
                    _refuse_binary(b"".join(parts)[:max_line], lines_done[0], path)
                    raise GraphFormatError(f"line longer than {max_line:,} bytes (not a graph "
                                           "file?)", path=path, line=lines_done[0] + 1)
                continue
            block = b"".join(parts + [data[:cut]]) if parts else data[:cut]
            parts, pending = ([data[cut:]], len(data) - cut) if cut < len(data) else ([], 0)
            yield block


def _plain_size(path):
    """The size of an uncompressed regular file (None for compressed files, pipes, devices)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            head = f.read(8)
        if any(head.startswith(magic) for magic, _, _ in _CODECS):
            return None
        return os.path.getsize(path)
    except OSError:
        return None


def _capacity(path, declared=None):
    """How many edges to allocate room for at first (room grows as needed)."""
    size = _plain_size(path)
    bound = None if size is None else size // MIN_EDGE_BYTES + 1
    guess = declared if declared is not None else bound
    if guess is None:
        return 1 << 20
    if bound is not None:
        guess = min(guess, bound)
    # untouched pages cost nothing, but keep the first reservation modest
    return max(1, min(guess, 1 << 27))


def _stream(path, max_line, **block_options):
    """The :class:`_Block` of each block of ``path``, numbered."""
    done = [0]
    for data in _blocks(path, max_line, done):
        blk = _Block(data, done[0], path, max_line=max_line, **block_options)
        yield blk
        done[0] += blk.newlines


def _refuse_binary(data, line0, path):
    """Raise if ``data`` holds a control byte (the first one is named)."""
    b = np.frombuffer(data, dtype=np.uint8)
    bad = np.flatnonzero(_CLASS[b] == 2)
    if bad.size:
        i = int(bad[0])
        nl = data.rfind(b"\n", 0, i)
        raise GraphFormatError(f"byte 0x{b[i]:02x} is not text (a binary file?)", path=path,
                               line=line0 + data.count(b"\n", 0, i) + 1, column=i - nl)


class _Block:
    """The lines and tokens of one block of whole lines, found in bulk.

    Per line: ``starts``, ``ends`` (without the newline), ``tokens`` (count),
    ``tfirst`` (its first token), ``comment``; per token: ``pos`` (where it
    starts). Refuses overlong lines and bytes that are not text.
    """

    def __init__(self, data, line0, path, *, comments, max_line, delimiter=None):
        self.data, self.line0, self.path = data, line0, path
        b = np.frombuffer(data, dtype=np.uint8)
        self.b = b
        nl = np.flatnonzero(b == 10)
        self.newlines = nl.size
        n = nl.size + (1 if b.size and b[-1] != 10 else 0)
        self.nlines = n
        starts = np.zeros(n, dtype=np.int64)
        starts[1:] = nl[:n - 1] + 1
        ends = np.full(n, b.size, dtype=np.int64)       # exclusive, without the newline
        ends[:nl.size] = nl[:n]
        self.starts, self.ends = starts, ends
        if n and int((ends - starts).max()) > max_line:
            i = int(np.argmax(ends - starts > max_line))
            _refuse_binary(data[starts[i]:starts[i] + max_line], line0 + i, path)
            raise GraphFormatError(f"line longer than {max_line:,} bytes", path=path,
                                   line=line0 + i + 1)
        # bytes that are not text: one fast test, the byte-by-byte search only on failure
        ctrl = np.count_nonzero(b < 32)
        if (b.size and b.max() > 127) or ctrl != nl.size + data.count(b"\t") + data.count(b"\r"):
            self._refuse_bytes(comments)
        # with no other control byte, the separators are exactly the bytes <= 32
        ws = b <= 32
        if delimiter is not None:
            ws |= b == ord(delimiter)
        self.delimiter = delimiter
        tstart = ~ws             # a token starts at a non-separator after a separator
        tstart[1:] &= ws[:-1]
        del ws
        pos = np.flatnonzero(tstart)
        del tstart
        self.pos = pos
        # tokens before each line's start: the line's first token; their differences: counts
        self.tfirst = np.searchsorted(pos, starts)
        self.tokens = np.diff(self.tfirst, append=pos.size) if n else np.zeros(0, np.int64)
        has = self.tokens > 0
        first = np.full(n, 32, dtype=np.uint8)
        first[has] = b[pos[self.tfirst[has]]]
        self.comment = np.zeros(n, dtype=bool)
        for ch in comments:
            self.comment |= first == ord(ch)

    def _refuse_bytes(self, comments):
        """Raise for the first byte that is not text (non-ASCII is allowed in comments)."""
        b, starts = self.b, self.starts
        cls = _CLASS[b]
        bad = np.flatnonzero(cls)
        line = np.searchsorted(starts, bad, side="right") - 1
        for k in range(bad.size):
            i, ln = int(bad[k]), int(line[k])
            if cls[i] == 1:
                lead = self.data[starts[ln]:self.ends[ln]].lstrip(b" \t\r")
                if lead[:1] and lead[:1].decode("latin-1") in comments:
                    continue          # an author's name in a comment
            what = ("is not text (a binary file?)" if cls[i] == 2 else
                    "is not ASCII (only comments may hold other text)")
            raise GraphFormatError(f"byte 0x{b[i]:02x} {what}", path=self.path,
                                   line=self.line0 + ln + 1, column=i - int(starts[ln]) + 1)

    def where(self, i):
        """The global 1-based number of the block's line ``i``."""
        return self.line0 + int(i) + 1

    def text(self, i):
        return self.data[self.starts[i]:self.ends[i]].rstrip(b"\r")

    def token(self, k):
        """``(text, line, column)`` of the block's token ``k``."""
        ln = int(np.searchsorted(self.starts, self.pos[k], side="right")) - 1
        rel = int(self.pos[k] - self.starts[ln])
        rest = np.frombuffer(self.data[self.pos[k]:self.ends[ln]], dtype=np.uint8)
        sep = rest <= 32
        if self.delimiter is not None:
            sep |= rest == ord(self.delimiter)
        end = int(np.argmax(sep)) if sep.any() else rest.size
        return rest[:max(end, 1)].tobytes(), self.where(ln), rel + 1

    def error(self, message, i, column=None):
        return GraphFormatError(message, path=self.path, line=self.where(i), column=column)

    def select(self, lo, hi):
        """The bytes of the segments ``[lo[k], hi[k])`` (sorted, disjoint), joined."""
        if lo.size == 0:
            return b""
        marks = np.zeros(self.b.size + 1, dtype=np.int8)
        marks[lo] = 1
        marks[hi] -= 1
        keep = np.cumsum(marks[:-1], dtype=np.int8).view(bool)
        return self.b[keep].tobytes()


def _line_quote(blk, i):
    return quote(blk.text(i))


def _fromstring(text, dtype, count, delimiter):
    """``count`` numbers parsed from ``text`` by NumPy's C parser, or None if it cannot."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    if delimiter is not None:
        text = text.replace(delimiter.encode(), b" ")
    try:
        with warnings.catch_warnings():
            # NumPy 1.x warns (and stops early) where 2.x raises
            warnings.simplefilter("error", DeprecationWarning)
            vals = np.fromstring(text, dtype=dtype, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    return vals if vals.size == count else None


def _bad_token(blk, lines, kinds, what):
    """The error for the first token of ``lines`` that is not of its column's kind
    (``kinds[c]``: "id" an integer, "int" an integer, "float" a number)."""
    for i in lines:
        for c, k in enumerate(range(blk.tfirst[i], blk.tfirst[i] + blk.tokens[i])):
            tok, line, col = blk.token(k)
            kind = kinds[min(c, len(kinds) - 1)] if not callable(kinds) else kinds(c)
            if kind in ("id", "int") and not _INT_RE.match(tok):
                noun = what if kind == "id" else "value"
                msg = (f"{quote(tok)} is not an integer {noun}" if _FLOAT_RE.match(tok)
                       else f"not a number: {quote(tok)}")
                return GraphFormatError(msg, path=blk.path, line=line, column=col)
            if kind == "float" and not _FLOAT_RE.match(tok):
                return GraphFormatError(f"not a number: {quote(tok)}", path=blk.path,
                                        line=line, column=col)
    return GraphFormatError("could not parse the numbers", path=blk.path,
                            line=blk.where(lines[0]) if len(lines) else None)


def _parse_rows(blk, rows, width, delimiter, what="vertex id", integer_weights=False):
    """Ids (int64, shape (k, 2)) and the third column (float64, or None) of the block's
    lines ``rows``, each holding ``width`` tokens. ``integer_weights``: the third column
    holds integers, each exact in float64 (within +-2**53)."""
    k = rows.size
    starts, ends = blk.starts[rows], np.minimum(blk.ends[rows] + 1, blk.b.size)
    if width == 2:
        if k == int(np.count_nonzero(blk.tokens)):
            text = blk.data          # every line with tokens is an edge: no copy
        else:
            text = blk.select(starts, ends)
        ids = _fromstring(text, np.int64, 2 * k, delimiter)
        if ids is None:
            raise _bad_token(blk, rows, ["id", "id"], what)
        return ids.reshape(k, 2), None
    kinds = ["id", "id", "int" if integer_weights else "float"]
    wpos = blk.pos[blk.tfirst[rows] + 2]
    ids = _fromstring(blk.select(starts, wpos), np.int64, 2 * k, delimiter)
    if ids is None:
        raise _bad_token(blk, rows, kinds, what)
    w = _fromstring(blk.select(wpos, ends), np.int64 if integer_weights else np.float64, k,
                    delimiter)
    if w is None:
        raise _bad_token(blk, rows, kinds, what)
    if integer_weights:
        bad = np.abs(w) > 2 ** 53
        if bad.any():
            tok, line, col = blk.token(blk.tfirst[rows[int(np.argmax(bad))]] + 2)
            raise GraphFormatError(f"integer value {quote(tok)} is too large to be held "
                                   "exactly as a float64 (within +-2**53)", path=blk.path,
                                   line=line, column=col)
        return ids.reshape(k, 2), w.astype(np.float64)
    if not np.isfinite(w).all():
        r = int(np.argmax(~np.isfinite(w)))
        tok, line, col = blk.token(blk.tfirst[rows[r]] + 2)
        raise GraphFormatError(f"weight {quote(tok)} is not finite", path=blk.path, line=line,
                               column=col)
    return ids.reshape(k, 2), w


def _check_ids(blk, rows, ids, *, offset, limit, limit_what):
    """Ids shifted to 0-based; refuses ids below ``offset`` and at or past ``limit`` + offset."""
    flat = ids.reshape(-1)
    lo_bad = flat < offset
    hi_bad = (flat == _INT64_MAX) | (flat >= limit + offset if limit is not None else False)
    bad = lo_bad | hi_bad
    if bad.any():
        j = int(np.argmax(bad))
        tok, line, col = blk.token(blk.tfirst[rows[j // 2]] + j % 2)
        v = flat[j]
        if v == _INT64_MAX or v == _INT64_MIN:
            msg = f"vertex id {quote(tok)} is out of range (past int64)"
        elif v < 0:
            msg = f"negative vertex id {int(v)}"
        elif v < offset:
            msg = f"{int(v)} is not a valid 1-based id (ids start at 1)"
        else:
            msg = f"vertex id {int(v)} is out of range for {limit_what}"
        raise GraphFormatError(msg, path=blk.path, line=line, column=col)
    if offset:
        ids -= offset
    return ids


def _check_vertex_count(n, m, max_vertices, path, what, line, hint=""):
    """Refuse a vertex count a file makes without edges to show for it (before allocating)."""
    limit = max(FREE_VERTICES, VERTICES_PER_EDGE * m) if max_vertices is None else max_vertices
    if n > limit:
        raise GraphFormatError(
            f"{what} would make {n:,} vertices for {m:,} edge{'s' if m != 1 else ''} "
            f"({8 * n / 2**30:,.1f} GiB of row offsets); pass max_vertices={n} to allow "
            f"that{hint}", path=path, line=line)


# ----------------------------------------------------------------------------- the edges
class _Edges:
    """The edges a reader keeps: two id arrays (int32 while the ids fit) and the weights,
    grown in place as blocks arrive (``ndarray.resize``: a ``realloc``, no second copy)."""

    def __init__(self, capacity=1 << 16):
        self.cap = max(int(capacity), 1)
        self.src = self.dst = self.w = None
        self.m = 0
        self.top = -1            # the largest id so far, and the line it is on
        self.top_at = None

    def add(self, ids, w, blk=None, rows=None):
        k = ids.shape[0]
        if k == 0:
            return
        hi = int(ids.max())
        if self.src is None:
            dt = np.int32 if hi <= _INT32_MAX else np.int64
            self.cap = max(self.cap, k)
            self.src = np.empty(self.cap, dtype=dt)
            self.dst = np.empty(self.cap, dtype=dt)
            if w is not None:
                self.w = np.empty(self.cap, dtype=np.float64)
        elif hi > _INT32_MAX and self.src.dtype == np.int32:
            self.src = self.src.astype(np.int64)
            self.dst = self.dst.astype(np.int64)
        if self.m + k > self.cap:
            self.cap = max(self.m + k, self.cap + self.cap // 2)
            for a in (self.src, self.dst, self.w):
                if a is not None:
                    a.resize(self.cap, refcheck=False)
        m = self.m
        self.src[m:m + k] = ids[:, 0]
        self.dst[m:m + k] = ids[:, 1]
        if self.w is not None:
            self.w[m:m + k] = w
        self.m += k
        if hi > self.top:
            self.top = hi
            if blk is not None:
                self.top_at = blk.where(rows[int(np.argmax(ids.max(axis=1) == hi))])

    def _trim(self):
        if self.src is None:
            self.src = np.zeros(0, dtype=np.int32)
            self.dst = np.zeros(0, dtype=np.int32)
        for a in (self.src, self.dst, self.w):
            if a is not None and a.shape[0] != self.m:
                a.resize(self.m, refcheck=False)    # shrinks in place

    def relabel(self):
        """Number the distinct ids 0..k-1 in increasing order; returns the original ids."""
        self._trim()
        labels = np.union1d(self.src, self.dst).astype(np.int64)
        dt = _index_dtype(labels.size)
        for name in ("src", "dst"):
            a = getattr(self, name)
            out = a if a.dtype == dt else np.empty(a.shape[0], dtype=dt)
            step = 1 << 22                          # bounded scratch for searchsorted
            for i in range(0, a.shape[0], step):
                out[i:i + step] = np.searchsorted(labels, a[i:i + step])
            setattr(self, name, out)
        return labels

    def graph(self, n, *, directed, mirror, remove_self_loops, remove_duplicates,
              weighted, node_labels=None):
        """The CSR graph of the edges (``mirror``: each stored both ways, a self-loop once)."""
        from gunpy._csr import build_csr
        self._trim()
        src, dst, w = self.src, self.dst, (self.w if weighted else None)
        if weighted and w is None:                  # no edges at all
            w = np.zeros(0, dtype=np.float64)
        self.src = self.dst = self.w = None
        ro, ci, vals = build_csr(src, dst, w, n, remove_self_loops=remove_self_loops,
                                 remove_duplicates=remove_duplicates,
                                 index_dtype=_index_dtype(n), mirror=mirror)
        del src, dst, w
        return Graph(ro, ci, vals, directed=directed, node_labels=node_labels, _trusted=True)


# ----------------------------------------------------------------------------- Matrix Market
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
    banner = None            # None: not seen yet; False: a file without one
    field, symmetry = "real", "general"
    size = None              # (vertices, entries) once the size line is read
    width = None
    edges = None
    found = 0
    last_line = None
    for blk in _stream(path, MAX_LINE, comments="%"):
        content = np.flatnonzero(~blk.comment & (blk.tokens > 0))
        if size is None:
            stop = int(content[0]) if content.size else blk.nlines
            if banner is None:
                banner, field, symmetry = _mtx_banner(blk, stop)
            if not content.size:
                continue
            size = _mtx_size(blk, int(content[0]))
            size_line = blk.where(content[0])
            _check_vertex_count(size[0], size[1], max_vertices, path, "the size line",
                                size_line)
            room = _plain_size(path)
            if room is not None and size[1] > room // MIN_EDGE_BYTES + 1:
                raise blk.error(f"the size line declares {size[1]:,} entries, more than a file "
                                f"of {room:,} bytes can hold", int(content[0]))
            edges = _Edges(_capacity(path, size[1]))
            last_line = size_line
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
    if directed is None:
        directed = symmetry != "symmetric"
    weighted = width == 3 if width is not None else bool(banner) and field != "pattern"
    return edges.graph(size[0], directed=directed,
                       mirror=symmetry == "symmetric" or not directed,
                       remove_self_loops=remove_self_loops,
                       remove_duplicates=remove_duplicates, weighted=weighted)


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


# ----------------------------------------------------------------------------- edge lists
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
    if format not in (None, "edgelist", "mtx", "metis"):
        raise ValueError(f"unknown format {format!r}; valid: None, 'edgelist', 'mtx', 'metis'")
    if delimiter is not None and delimiter.isspace():
        delimiter = None
    if delimiter is not None and (len(delimiter) != 1 or not delimiter.isascii()
                                  or delimiter.isalnum() or delimiter in "+-.#%"):
        raise ValueError(f"delimiter must be one ASCII punctuation character, got {delimiter!r}")
    if num_vertices is not None:
        from gunpy.graph import _as_count
        num_vertices = _as_count("num_vertices", num_vertices)
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
    limit = None if num_vertices is None else num_vertices
    edges = _Edges(_capacity(path))
    keep_w = False
    width = None
    first_at = None
    metis_like = None        # (a, b) of the first line, lines after it: a METIS header?
    for data in itertools.chain(head, blocks):
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
        ids = _check_ids(blk, rows, ids, offset=off, limit=limit,
                         limit_what=f"num_vertices={num_vertices}")
        edges.add(ids, w if keep_w else None, blk, rows)
    if auto and width == 2 and metis_like is not None:
        a, b, after = metis_like
        if a == b == after > 0 and edges.top + off <= a:
            raise GraphFormatError(
                f"this reads as a METIS graph (a first line '{a} {b}', then {a:,} lines); "
                "read it with gunpy.io.read_metis (or name it .graph), or pass "
                "format='edgelist' to read it as an edge list", path=path, line=first_at)
    if width is None:
        return Graph.from_edges([], [], num_vertices=num_vertices or 0, directed=directed)
    labels = None
    if relabel:
        labels = edges.relabel() + off
        if num_vertices is not None and num_vertices != labels.size:
            raise GraphFormatError(f"num_vertices={num_vertices} but the file has "
                                   f"{labels.size:,} distinct ids", path=path)
        n = labels.size
    elif num_vertices is not None:
        n = num_vertices
    else:
        n = edges.top + 1
        _check_vertex_count(n, edges.m, max_vertices, path, f"the largest id, {edges.top + off},",
                            edges.top_at, hint=", or relabel=True to number the ids in use 0..k-1")
    return edges.graph(n, directed=directed, mirror=not directed,
                       remove_self_loops=remove_self_loops,
                       remove_duplicates=remove_duplicates, weighted=keep_w,
                       node_labels=labels)


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


# ----------------------------------------------------------------------------- METIS
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
        t = blk.tokens[lines]
        bad = (t < skip) | ((t - skip) % per != 0)
        if bad.any():
            i = int(lines[np.argmax(bad)])
            raise blk.error(f"vertex {v + int(np.argmax(bad)) + 1}'s line holds "
                            f"{int(blk.tokens[i])} numbers; the header's format needs {skip} "
                            f"then {'pairs (neighbour, weight)' if per == 2 else 'neighbours'}",
                            i)
        total = int(t.sum())
        vals = _fromstring(blk.select(blk.starts[lines],
                                      np.minimum(blk.ends[lines] + 1, blk.b.size)),
                           np.int64, total, None)
        if vals is None:
            raise _bad_token(blk, lines[t > 0], ["int"], "vertex id")
        rank = np.arange(total) - np.repeat(np.cumsum(t) - t, t)
        is_nbr = (rank >= skip) & ((rank - skip) % per == 0)
        ids = vals[is_nbr]
        bad = (ids < 1) | (ids > n)
        if bad.any():
            j = int(np.flatnonzero(is_nbr)[np.argmax(bad)])
            k = int(np.repeat(blk.tfirst[lines], t)[j] + rank[j])
            tok, line, col = blk.token(k)
            raise GraphFormatError(f"neighbour {quote(tok)} is out of range 1..{n:,}",
                                   path=path, line=line, column=col)
        src = np.repeat(np.arange(v, v + lines.size, dtype=np.int64), (t - skip) // per)
        w = None
        if weighted:
            wi = vals[(rank >= skip) & ((rank - skip) % per == 1)]
            big = np.abs(wi) > _EXACT_FLOAT
            if big.any():
                raise blk.error(f"edge weight {int(wi[np.argmax(big)])} is past +-2**53 (not "
                                "exact as a float64)", int(lines[0]))
            w = wi.astype(np.float64)
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
