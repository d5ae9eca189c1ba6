"""The text of a graph file: blocks of whole lines, their tokens, their numbers.

:func:`_blocks` reads a file in blocks of whole lines (decompressing gzip, bzip2
and xz by content), :class:`_Block` finds a block's lines, tokens and comments in
bulk, :func:`_parse_rows` parses its edges (ids as int64, weights as floats) and
the ``_check_*`` helpers refuse what a graph file may not hold, naming the line
and column.
"""

import bz2
import gzip
import lzma
import os
import re
import warnings
import zlib

import numpy as np

from gunpy.errors import GraphFormatError, quote

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
