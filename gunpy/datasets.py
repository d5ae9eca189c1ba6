"""Datasets: the small real graphs bundled with gunpy, and the papers' large ones on request.

``datasets/registry.json`` lists every graph. A *bundled* entry names a file
in the data directory and the loader options its format needs; a *remote*
entry names a public URL (SuiteSparse collection, SNAP, Network Repository),
the archive format and the expected size. :func:`load` downloads a remote graph
once into the cache (``$GUNPY_CACHE``, default ``~/.cache/gunpy``) with a
progress bar, verifies its SHA-256, converts it to a binary ``.npz`` CSR and
loads that form afterwards. Every cache write goes to a temporary file that is
renamed into place, so an interrupted download or conversion never leaves a
corrupt file behind.

Checksums: where the registry has none (``"sha256": null``), the checksum of
the first download is recorded next to it in the cache and later downloads are
verified against that record.

Examples
--------
>>> import gunpy
>>> "email-Enron" in gunpy.datasets.available()
True
>>> G = gunpy.datasets.load("karate")
>>> G.num_vertices
34
"""

import contextlib
import copy
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
import warnings
import zipfile

import numpy as np

from gunpy.errors import GraphFormatError
from gunpy.graph import Graph

__all__ = ["available", "remote", "info", "load", "fetch", "register", "data_dir", "cache_dir"]

_REGISTRY = None
_EXTRA = {}


# ----------------------------------------------------------------------------- locations
def data_dir():
    """The directory that holds the bundled files and ``registry.json``."""
    candidates = []
    if os.environ.get("GUNPY_DATA"):
        candidates.append(os.environ["GUNPY_DATA"])
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(os.path.dirname(here), "datasets"))   # source / editable
    candidates.append(os.path.join(sys.prefix, "share", "gunpy", "datasets"))  # pip install
    for c in candidates:
        if os.path.exists(os.path.join(c, "registry.json")):
            return c
    raise FileNotFoundError("gunpy's datasets directory was not found (looked in "
                            + ", ".join(candidates) + "); set GUNPY_DATA")


def cache_dir():
    """Where remote graphs are downloaded and converted (``$GUNPY_CACHE`` or ``~/.cache/gunpy``)."""
    d = os.environ.get("GUNPY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gunpy")
    os.makedirs(d, exist_ok=True)
    return d


def _registry():
    global _REGISTRY
    if _REGISTRY is None:
        with open(os.path.join(data_dir(), "registry.json")) as f:
            reg = json.load(f)
        reg.pop("_about", None)
        _REGISTRY = reg
    merged = dict(_REGISTRY)
    merged.update(_EXTRA)
    return merged


def register(name, **entry):
    """Add (or replace) a registry entry for this process, e.g. a private ``file://`` URL."""
    if "file" not in entry and "url" not in entry:
        raise ValueError("a dataset entry needs a 'file' (bundled) or a 'url' (remote)")
    _EXTRA[name] = entry


def available():
    """Names of the bundled graphs (no download needed), sorted."""
    return sorted(k for k, v in _registry().items() if "file" in v)


def remote():
    """Names of the registered graphs that are downloaded on request, sorted."""
    return sorted(k for k, v in _registry().items() if "url" in v)


def info(name):
    """The registry entry of ``name`` (a copy)."""
    reg = _registry()
    if name not in reg:
        raise ValueError(f"unknown dataset {name!r}; bundled: {', '.join(available())}; "
                         f"downloadable: {', '.join(remote())}")
    return copy.deepcopy(reg[name])


# ----------------------------------------------------------------------------- loading
def _load_file(path, meta):
    from gunpy.io import read_edgelist, read_mtx
    fmt = meta.get("format", "mtx" if path.endswith((".mtx", ".mtx.gz")) else "edgelist")
    if fmt == "mtx":
        return read_mtx(path, directed=meta.get("directed"))
    return read_edgelist(path, directed=meta.get("directed", True),
                         one_based=meta.get("one_based", False), relabel=meta.get("relabel", False),
                         weighted=meta.get("weighted"))


def load(name, *, cache_dir=None, download=True, progress=True):
    """Load a dataset by name as a :class:`gunpy.Graph`.

    Bundled graphs load from the data directory; remote ones are fetched once
    (see :func:`fetch`) and then read from their converted ``.npz`` form.

    Raises
    ------
    ValueError
        Unknown name (the message lists the valid ones).
    FileNotFoundError
        A remote graph is not cached and ``download=False``.
    """
    meta = info(name)
    if "file" in meta:
        return _load_file(os.path.join(data_dir(), meta["file"]), meta)
    npz = _npz_path(name, cache_dir)
    if not os.path.exists(npz):
        fetch(name, cache_dir=cache_dir, download=download, progress=progress)
    try:
        return _read_npz(npz)
    except GraphFormatError as exc:
        # a damaged or tampered conversion: made again from the (checksummed) download
        warnings.warn(f"{exc}; converting {name!r} again", RuntimeWarning, stacklevel=2)
        with contextlib.suppress(OSError):
            os.unlink(npz)
        fetch(name, cache_dir=cache_dir, download=download, progress=progress)
        return _read_npz(npz)


def _npz_path(name, cache_dir_):
    return os.path.join(cache_dir_ or cache_dir(), f"{name}.npz")


#: The arrays of a converted dataset: name -> (dtypes allowed, number of dimensions).
_NPZ_FIELDS = {
    "row_offsets": ((np.int64,), 1),
    "column_indices": ((np.int32, np.int64), 1),
    "values": ((np.float64,), 1),
    "weighted": ((np.bool_,), 0),
    "directed": ((np.bool_,), 0),
    "node_labels": ((np.int64, np.int32, np.uint64, np.float64), 1),
    "has_labels": ((np.bool_,), 0),
}


def _read_npz(path):
    """A converted dataset, checked like any other input before it becomes a graph.

    The file is read member by member, without pickle: each array's header must
    name an allowed dtype and shape whose size matches the member's (stored,
    uncompressed) size, the zip CRC must hold, and the arrays must form a valid
    CSR (the checks of :class:`Graph`). Anything else raises
    :class:`GraphFormatError`; :func:`load` then converts the dataset again.
    """
    try:
        arrays = {}
        room = os.path.getsize(path)
        with zipfile.ZipFile(path) as zf:
            for name, (dtypes, ndim) in _NPZ_FIELDS.items():
                info = zf.getinfo(name + ".npy")
                if info.compress_type != zipfile.ZIP_STORED or info.file_size > room:
                    raise ValueError(f"{name}: not a stored member of a plausible size")
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, fortran, dtype = read_header(f)
                    if dtype not in [np.dtype(t) for t in dtypes] or len(shape) != ndim:
                        raise ValueError(f"{name}: dtype {dtype}, shape {shape}")
                    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                    if f.tell() + nbytes != info.file_size:
                        raise ValueError(f"{name}: {nbytes} bytes of data in a member of "
                                         f"{info.file_size}")
                    data = f.read(nbytes)
                    f.read()                      # to the end: the CRC is checked there
                if len(data) != nbytes:
                    raise ValueError(f"{name}: truncated")
                arrays[name] = np.frombuffer(data, dtype=dtype).reshape(shape)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, ValueError, OSError,
            EOFError) as exc:
        raise GraphFormatError(f"damaged dataset file ({str(exc)[:120]})", path=path) from None
    weighted, has_labels = bool(arrays["weighted"]), bool(arrays["has_labels"])
    try:
        return Graph(arrays["row_offsets"], arrays["column_indices"],
                     arrays["values"] if weighted else None, directed=bool(arrays["directed"]),
                     node_labels=arrays["node_labels"].copy() if has_labels else None)
    except ValueError as exc:
        raise GraphFormatError(f"damaged dataset file ({exc})", path=path) from None


@contextlib.contextmanager
def _atomic_write(path, mode="wb"):
    """Write to a temporary file beside ``path`` and rename it into place on success."""
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".part-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _download(url, dest, *, progress, expected=None):
    """Stream ``url`` to ``dest`` atomically with a progress bar; returns the SHA-256."""
    sha = hashlib.sha256()
    with urllib.request.urlopen(url) as resp:
        total = int(resp.headers.get("Content-Length") or 0) or None
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=total, unit="B", unit_scale=True, desc=os.path.basename(dest),
                       disable=not progress)
        try:
            with _atomic_write(dest) as f:
                while True:
                    chunk = resp.read(1 << 20)
                    if not chunk:
                        break
                    f.write(chunk)
                    sha.update(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
                digest = sha.hexdigest()
                if expected and digest != expected:
                    raise ValueError(f"checksum mismatch for {url}: expected sha256 {expected}, "
                                     f"got {digest}; the download was discarded")
        finally:
            if bar is not None:
                bar.close()
    return digest


def _extract(archive, meta, workdir):
    """Path of the graph file inside a downloaded archive (extracted into ``workdir``)."""
    fmt = meta.get("format", "mtx")
    if fmt not in ("tar-mtx", "zip-mtx"):
        return archive  # mtx, edgelist (plain or .gz): read directly
    tar = fmt == "tar-mtx"
    member = meta.get("member")
    with (tarfile.open(archive, "r:*") if tar else zipfile.ZipFile(archive)) as af:
        names = af.getnames() if tar else af.namelist()
        target = member if member in names else next(
            (n for n in names if n.endswith(".mtx")), None)
        if target is None:
            raise ValueError(f"no .mtx file in {archive}")
        out = os.path.join(workdir, os.path.basename(target))
        with (af.extractfile(target) if tar else af.open(target)) as src, \
                _atomic_write(out) as f:
            shutil.copyfileobj(src, f, 1 << 20)
        return out


def fetch(name, *, cache_dir=None, download=True, progress=True):
    """Download and convert a remote dataset once; returns the path of its ``.npz``.

    Bundled datasets return the path of their file.
    """
    meta = info(name)
    if "file" in meta:
        return os.path.join(data_dir(), meta["file"])
    d = cache_dir or globals()["cache_dir"]()
    os.makedirs(d, exist_ok=True)
    npz = _npz_path(name, d)
    if os.path.exists(npz):
        return npz
    url = meta["url"]
    archive = os.path.join(d, os.path.basename(url.split("?")[0]) or f"{name}.download")
    record = archive + ".sha256"
    expected = meta.get("sha256")
    if expected is None and os.path.exists(record):
        with open(record) as f:
            expected = f.read().strip() or None
    if not os.path.exists(archive):
        if not download:
            raise FileNotFoundError(f"dataset {name!r} is not in the cache {d}; run "
                                    f"gunpy.datasets.fetch({name!r}) or `gunpy datasets fetch "
                                    f"{name}` with network access")
        digest = _download(url, archive, progress=progress, expected=expected)
        if meta.get("sha256") is None and not os.path.exists(record):
            with _atomic_write(record, "w") as f:
                f.write(digest + "\n")
    else:
        digest = _sha256_file(archive)
        if expected and digest != expected:
            os.unlink(archive)
            raise ValueError(f"cached {archive} fails its checksum (expected {expected}, got "
                             f"{digest}); it was removed, fetch again")
    path = _extract(archive, meta, d)
    fmt = meta.get("format", "mtx")
    G = _load_file(path, {**meta, "format": "mtx" if fmt in ("tar-mtx", "zip-mtx") else fmt})
    with _atomic_write(npz) as f:
        np.savez(f, row_offsets=G.row_offsets, column_indices=G.column_indices,
                 values=G.values if G.values is not None else np.zeros(0),
                 weighted=G.values is not None, directed=G.directed,
                 node_labels=np.asarray(G.node_labels) if G.node_labels is not None else
                 np.zeros(0, dtype=np.int64), has_labels=G.node_labels is not None)
    if path != archive:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return npz


def _sha256_file(path):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()

