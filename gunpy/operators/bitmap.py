"""bitmap: dense frontiers (one bit per vertex in 32-bit words) and conversions.

Pull traversal reads frontiers and the visited set as bitmaps; push reads
queues. Converting a queue to a bitmap sets one bit per item (atomic OR);
converting back counts the bits of every word (popcount), scans the counts
(:mod:`gunpy.operators.scan`) and writes each word's set bits at its offset,
so the queue comes out sorted.
"""

import functools

import numpy as np

from gunpy import atomics
from gunpy.operators import scan
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["num_words", "queue_to_bitmap", "bitmap_to_queue", "or_into", "popcount", "invert",
           "full"]


def num_words(n):
    return max(1, (int(n) + 31) // 32)


@functools.lru_cache(maxsize=None)
def _cuda():
    from gunpy.backends.cuda import kernel

    def set_bits(queue, length, words):
        n = length[0]
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = queue[i]
            if v >= 0:
                atomics.or_(words, v >> 5, np.uint32(1) << np.uint32(v & 31))

    def or_words(dst, src, nwords):
        for w in range(cuda.grid(1), nwords, cuda.gridsize(1)):
            dst[w] |= src[w]

    def write_queue(words, nwords, offsets, queue, length, total):
        start = cuda.grid(1)
        if start == 0:
            length[0] = total
        for w in range(start, nwords, cuda.gridsize(1)):
            bits = words[w]
            pos = offsets[w]
            while bits != 0:
                # lowest set bit first, so the queue comes out sorted
                b = cuda.ffs(bits) - 1
                queue[pos] = w * 32 + b
                pos += 1
                bits &= bits - np.uint32(1)

    def not_words(dst, src, nwords, nbits):
        for w in range(cuda.grid(1), nwords, cuda.gridsize(1)):
            x = ~src[w]
            if w == nwords - 1 and (nbits & 31) != 0:
                x &= (np.uint32(1) << np.uint32(nbits & 31)) - np.uint32(1)
            dst[w] = x

    return kernel(set_bits), kernel(or_words), kernel(write_queue), kernel(not_words)


@functools.lru_cache(maxsize=None)
def _cpu():
    from numba import njit, prange
    from numba.cpython.unsafe.numbers import trailing_zeros

    from gunpy.backends.cpu import kernel, serial_kernel

    def set_bits(queue, n, words):
        for i in prange(n):
            v = queue[i]
            if v >= 0:
                atomics.or_(words, v >> 5, np.uint32(1) << np.uint32(v & 31))

    def or_words(dst, src, nwords):
        for w in prange(nwords):
            dst[w] |= src[w]

    @njit(inline="always")
    def write_bits(w, words, _, queue, pos):
        # word w's set bits, in order, at the queue's pos on (the scan of the popcounts):
        # one step a set bit, the lowest first (a dense bitmap of RMAT-18's vertices,
        # 140,547 bits: 0.90 -> 0.26 ms against a step for every bit up to the highest)
        bits = words[w]
        base = np.int64(w) * 32
        while bits != np.uint32(0):
            queue[pos] = base + trailing_zeros(bits)
            pos += 1
            bits &= bits - np.uint32(1)
        return pos

    to_queue = scan.cpu_chunk_scan("popcount", write_bits)

    def popcount(words, nwords):
        s = 0
        for w in prange(nwords):
            # SWAR bit count: a few operations per word, however many bits are set
            x = np.uint64(words[w])
            x = x - ((x >> np.uint64(1)) & np.uint64(0x55555555))
            x = (x & np.uint64(0x33333333)) + ((x >> np.uint64(2)) & np.uint64(0x33333333))
            x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F)
            s += np.int64(((x * np.uint64(0x01010101)) & np.uint64(0xFFFFFFFF)) >> np.uint64(24))
        return s

    def not_words(dst, src, nwords, nbits):
        for w in prange(nwords):
            x = ~src[w]
            if w == nwords - 1 and (nbits & 31) != 0:
                x &= (np.uint32(1) << np.uint32(nbits & 31)) - np.uint32(1)
            dst[w] = x

    # set_bits, to_queue and popcount are (parallel, serial) pairs: a thin frontier
    # (BFS's source) sets its few bits, and a small bitmap is read, without starting
    # the thread pool
    return ((kernel(set_bits), serial_kernel(set_bits, nrt=False)),
            (kernel(or_words), serial_kernel(or_words, nrt=False)),
            (kernel(to_queue), serial_kernel(to_queue)),
            (kernel(popcount), serial_kernel(popcount, nrt=False)), kernel(not_words))


def queue_to_bitmap(backend, queue, length, n_items, words, *, clear=True):
    """Set the bit of every id in ``queue[:n_items]`` (after clearing ``words``)."""
    if clear:
        backend.fill(words, 0)
    if n_items == 0:
        return
    QUEUE_TO_BITMAP(backend, queue, length, n_items, words)


def or_into(backend, dst, src):
    """``dst |= src`` word by word."""
    OR_INTO(backend, dst, src)


def bitmap_to_queue(backend, words, queue, length, scratch):
    """Write the set bits of ``words`` to ``queue`` in increasing order; returns the count.

    ``scratch(name, n, dtype)`` supplies work arrays.
    """
    return BITMAP_TO_QUEUE(backend, words, queue, length, scratch)


def invert(backend, dst, src, num_bits):
    """``dst = ~src`` word by word, bits at ``num_bits`` and above left clear
    (a complemented mask; ``dst`` may be ``src``)."""
    INVERT(backend, dst, src, num_bits)


def full(backend, num_bits):
    """A new bitmap with the first ``num_bits`` bits set."""
    words = backend.zeros(num_words(num_bits), np.uint32)
    invert(backend, words, words, num_bits)
    return words


def popcount(backend, words):
    """Number of set bits."""
    return POPCOUNT(backend, words)


# -- the backends' implementations (the operators at the end name them) ---------------
def cuda_queue_to_bitmap(backend, queue, length, n_items, words):
    backend.run(_cuda()[0], n_items, queue, length, words)


def cpu_queue_to_bitmap(backend, queue, length, n_items, words):
    parallel, serial = _cpu()[0]
    (serial if n_items < backend.serial_below else parallel)(queue, n_items, words)


def cuda_or_into(backend, dst, src):
    nwords = dst.shape[0]
    backend.run(_cuda()[1], nwords, dst, src, nwords)


def cpu_or_into(backend, dst, src):
    parallel, serial = _cpu()[1]
    n = dst.shape[0]
    # as popcount: a bitmap of a few million vertices is OR-ed faster than the thread pool
    # starts (after each pull of a BFS: RMAT-18's 8,192 words, ~5 us on one core)
    (serial if n < 16 * backend.serial_below else parallel)(dst, src, n)


def cuda_invert(backend, dst, src, num_bits):
    nwords = dst.shape[0]
    backend.run(_cuda()[3], nwords, dst, src, nwords, np.int64(num_bits))


def cpu_invert(backend, dst, src, num_bits):
    _cpu()[4](dst, src, dst.shape[0], np.int64(num_bits))


def cuda_bitmap_to_queue(backend, words, queue, length, scratch):
    nwords = words.shape[0]
    offsets = scratch("bitmap.offsets", nwords, np.int64)
    total = scan.exclusive_scan(backend, "popcount", nwords, words, words, offsets)
    backend.run(_cuda()[2], nwords, words, nwords, offsets, queue, length, np.int64(total))
    return total


def cpu_bitmap_to_queue(backend, words, queue, length, scratch):
    nwords = words.shape[0]
    parallel, serial = _cpu()[2]
    if nwords * 32 < backend.serial_below:
        # a bitmap of fewer vertices than a thin pass takes: one core reads it faster
        # than the two parallel regions (the scan's) start (RMAT-18's 262,144 vertices,
        # 7,930 bits set: 0.14 -> 0.08 ms; 140,547 set: 0.29 -> 0.23 ms)
        total = int(serial(words, words, nwords, queue, 1))
    else:
        total = int(parallel(words, words, nwords, queue,
                             backend.chunks(nwords, min_chunk=1024)))
    length[0] = total
    return total


def cuda_popcount(backend, words):
    nwords = words.shape[0]
    return scan.total(backend, "popcount", nwords, words, words)


def cpu_popcount(backend, words):
    parallel, serial = _cpu()[3]
    # a small bitmap (a road network's) is counted faster than the thread pool starts
    n = words.shape[0]
    return int((serial if n < 16 * backend.serial_below else parallel)(words, n))


QUEUE_TO_BITMAP = Operator("bitmap.queue_to_bitmap", "backend, queue, length, n_items, words",
                           cpu=cpu_queue_to_bitmap, cuda=cuda_queue_to_bitmap)

BITMAP_TO_QUEUE = Operator("bitmap.bitmap_to_queue", "backend, words, queue, length, scratch",
                           cpu=cpu_bitmap_to_queue, cuda=cuda_bitmap_to_queue)

OR_INTO = Operator("bitmap.or_into", "backend, dst, src", cpu=cpu_or_into, cuda=cuda_or_into)

POPCOUNT = Operator("bitmap.popcount", "backend, words", cpu=cpu_popcount, cuda=cuda_popcount)

INVERT = Operator("bitmap.invert", "backend, dst, src, num_bits", cpu=cpu_invert, cuda=cuda_invert)
