"""Graph file readers: peak memory and MB/s of gunpy's readers beside scipy's and pandas'.

    python bench/readers.py                       # a ~2 GB edge list, made on the fly
    python bench/readers.py --size-mb 200 --readers gunpy-mtx,scipy --reps 2
    python bench/readers.py --gzip                # also time the .gz of the same list

The file is an RMAT (Graph500 Kronecker) edge list written in pieces, one
``u v`` line per edge with ids 1-based, so that the very same bytes are a
Matrix Market body: ``graph.txt`` holds the lines, ``graph.mtx`` the same lines
after a ``pattern general`` banner and size line. Each reader runs in a fresh
process (``--run``), which reports its wall time and its peak resident memory
(``VmHWM``) above what the process held after its imports, and its CPU time:

* ``gunpy-edgelist``: ``gunpy.read_edgelist(graph.txt, one_based=True)``, a
  directed :class:`gunpy.Graph` (CSR);
* ``gunpy-undirected``: the same with ``directed=False`` (each edge stored both ways);
* ``gunpy-mtx``: ``gunpy.read_mtx(graph.mtx)``, the directed graph again;
* ``scipy``: ``scipy.io.mmread(graph.mtx)``, a COO matrix (parse only: no CSR);
* ``pandas``: ``pandas.read_csv(graph.txt, sep=" ", header=None)``, a frame of
  two int64 columns (parse only).

The report gives seconds (wall and CPU), MB/s of text (wall), peak memory in
MB, per input byte and per input edge (line), and the final object's size
(the graph's CSR arrays, the COO arrays, the frame). The files are removed at
the end unless ``--keep``; ``--dir D --keep`` then ``--dir D --reuse`` reads
them again (another build, another reader).
"""

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

READERS = ("gunpy-edgelist", "gunpy-undirected", "gunpy-mtx", "scipy", "pandas")


# ----------------------------------------------------------------------------- the file
def _format_lines(u, v):
    """``"u v\\n"`` lines for two id arrays, formatted with NumPy (no Python loop)."""
    width = max(len(str(int(u.max(initial=0)))), len(str(int(v.max(initial=0)))), 1)
    k = u.shape[0]
    rec = np.full((k, 2 * width + 2), ord(" "), dtype=np.uint8)
    keep = np.zeros(rec.shape, dtype=bool)
    for col, x in ((0, u), (width + 1, v)):
        x = x.astype(np.int64)
        digits = np.maximum(np.floor(np.log10(np.maximum(x, 1))).astype(np.int64) + 1, 1)
        for p in range(width):
            rec[:, col + width - 1 - p] = ord("0") + (x // 10 ** p) % 10
            keep[:, col + width - 1 - p] = p < digits
    keep[:, width] = True            # the space between the ids
    rec[:, -1] = ord("\n")
    keep[:, -1] = True
    return rec[keep].tobytes()


def make_files(directory, size_mb, scale, gz):
    """Write graph.txt and graph.mtx (~size_mb each); returns (paths, vertices, edges)."""
    from gunpy.generators import kronecker_edges
    n = 1 << scale
    txt = os.path.join(directory, "graph.txt")
    body_bytes = 0
    m = 0
    piece = 0
    with open(txt, "wb") as f:
        while body_bytes < size_mb * 1e6:
            src, dst = kronecker_edges(scale, 1, seed=piece)      # 2**scale edges a piece
            data = _format_lines(src + 1, dst + 1)
            f.write(data)
            body_bytes += len(data)
            m += src.shape[0]
            piece += 1
    mtx = os.path.join(directory, "graph.mtx")
    with open(mtx, "wb") as out, open(txt, "rb") as body:
        out.write(f"%%MatrixMarket matrix coordinate pattern general\n{n} {n} {m}\n".encode())
        shutil.copyfileobj(body, out, 1 << 24)
    paths = {"txt": txt, "mtx": mtx}
    if gz:
        paths["gz"] = txt + ".gz"
        with open(txt, "rb") as body, gzip.open(paths["gz"], "wb", compresslevel=1) as out:
            shutil.copyfileobj(body, out, 1 << 24)
    return paths, n, m


# ----------------------------------------------------------------------------- one reader
def _rss_mb():
    """This process's peak resident memory in MB: VmHWM (Linux), else ``ru_maxrss`` (which
    Linux carries over from the parent across ``exec``, so it can only be an upper bound)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_one(reader, path, vertices):
    """Run one reader in this process; print a JSON line of its numbers."""
    if reader.startswith("gunpy"):
        import gunpy
    elif reader == "scipy":
        import scipy.io
    else:
        import pandas as pd
    base = _rss_mb()
    t0 = time.perf_counter()
    c0 = _cpu_s()
    if reader in ("gunpy-edgelist", "gunpy-gz", "gunpy-undirected"):
        G = gunpy.read_edgelist(path, one_based=True, num_vertices=vertices,
                                directed=reader != "gunpy-undirected")
        edges, nbytes = G.num_edges, G.nbytes()
    elif reader == "gunpy-mtx":
        G = gunpy.read_mtx(path)
        edges, nbytes = G.num_edges, G.nbytes()
    elif reader == "scipy":
        A = scipy.io.mmread(path)
        edges, nbytes = A.nnz, A.data.nbytes + A.row.nbytes + A.col.nbytes
    else:
        df = pd.read_csv(path, sep=" ", header=None, dtype=np.int64, engine="c")
        edges, nbytes = len(df), int(df.memory_usage(index=False).sum())
    seconds = time.perf_counter() - t0
    print(json.dumps({"reader": reader, "seconds": seconds, "cpu": _cpu_s() - c0,
                      "peak_mb": _rss_mb() - base,
                      "edges": int(edges), "result_mb": nbytes / 1e6}))


# ----------------------------------------------------------------------------- the report
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=float, default=2000, help="text size (default 2000)")
    p.add_argument("--scale", type=int, default=23, help="RMAT scale: 2**scale vertices")
    p.add_argument("--readers", default=",".join(READERS))
    p.add_argument("--reps", type=int, default=1, help="runs per reader (best time kept)")
    p.add_argument("--gzip", action="store_true", help="also read graph.txt.gz (gunpy-gz)")
    p.add_argument("--dir", help="where to write the files (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the files")
    p.add_argument("--reuse", action="store_true",
                   help="read the files a --keep run left in --dir instead of writing new ones")
    p.add_argument("--run", nargs=3, metavar=("READER", "PATH", "VERTICES"),
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.run:
        run_one(args.run[0], args.run[1], int(args.run[2]))
        return 0
    readers = [r for r in args.readers.split(",") if r]
    if args.gzip and "gunpy-gz" not in readers:
        readers.append("gunpy-gz")
    directory = args.dir or tempfile.mkdtemp(prefix="gunpy-readers-")
    os.makedirs(directory, exist_ok=True)
    try:
        t0 = time.perf_counter()
        if args.reuse:
            paths = {"txt": os.path.join(directory, "graph.txt"),
                     "mtx": os.path.join(directory, "graph.mtx"),
                     "gz": os.path.join(directory, "graph.txt.gz")}
            with open(paths["mtx"]) as f:
                f.readline()
                n, _, m = (int(t) for t in f.readline().split())
        else:
            paths, n, m = make_files(directory, args.size_mb, args.scale, args.gzip)
        size = os.path.getsize(paths["txt"])
        print(f"# {size / 1e6:,.0f} MB edge list, {m:,} edges, {n:,} vertices "
              f"(written in {time.perf_counter() - t0:.0f} s)", flush=True)
        where = {"gunpy-edgelist": "txt", "gunpy-undirected": "txt", "gunpy-mtx": "mtx",
                 "scipy": "mtx", "pandas": "txt", "gunpy-gz": "gz"}
        print("| reader | s | CPU s | MB/s | peak MB | peak B / input B | peak B / input edge | "
              "result MB |\n|---|---|---|---|---|---|---|---|")
        for r in readers:
            best = None
            for _ in range(args.reps):
                out = subprocess.run([sys.executable, __file__, "--run", r, paths[where[r]],
                                      str(n)], capture_output=True, text=True)
                if out.returncode != 0:
                    tail = (out.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"| {r} | failed: {tail[:120]} | | | | | | |", flush=True)
                    break
                res = json.loads(out.stdout.strip().splitlines()[-1])
                if best is None or res["seconds"] < best["seconds"]:
                    best = res
            if best is None:
                continue
            print(f"| {r} | {best['seconds']:.1f} | {best['cpu']:.1f} | "
                  f"{size / 1e6 / best['seconds']:.0f} | {best['peak_mb']:,.0f} | "
                  f"{best['peak_mb'] * 1e6 / size:.2f} | {best['peak_mb'] * 1e6 / m:.1f} | "
                  f"{best['result_mb']:,.0f} |",
                  flush=True)
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
