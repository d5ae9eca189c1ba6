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

One module per format (:mod:`~gunpy.io.mtx`, :mod:`~gunpy.io.edgelist`,
:mod:`~gunpy.io.metis`) over the shared machinery: ``_text`` (blocks, lines,
tokens, numbers and their checks) and ``_edges`` (the edges kept, and the CSR
built from them).

Examples
--------
>>> import gunpy, os
>>> path = os.path.join(gunpy.datasets.data_dir(), "karate.mtx")
>>> gunpy.io.detect_format(path), gunpy.read_edgelist(path).directed  # by content
('mtx', False)
"""

from gunpy.io._text import (BLOCK, FREE_VERTICES, MAX_LINE, METIS_MAX_LINE, MIN_EDGE_BYTES,
                            VERTICES_PER_EDGE)
from gunpy.io.edgelist import detect_format, read_edgelist
from gunpy.io.metis import read_metis
from gunpy.io.mtx import read_mtx

__all__ = ["read_mtx", "read_edgelist", "read_metis", "detect_format", "BLOCK", "MAX_LINE",
           "METIS_MAX_LINE", "FREE_VERTICES", "VERTICES_PER_EDGE", "MIN_EDGE_BYTES"]
