"""Bundled datasets, the registry, and the download/convert/cache path (file:// URLs only)."""

import io
import os
import tarfile

import numpy as np
import pytest

import gunpy
from gunpy import datasets


@pytest.mark.parametrize("name", datasets.available())
def test_bundled_dataset_matches_registry(name):
    G = datasets.load(name)
    meta = datasets.info(name)
    assert G.num_vertices == meta["vertices"]
    edges = G.num_edges if G.directed else G.num_edges // 2
    assert edges == meta["edges"]
    assert G.directed == meta["directed"]


def test_available_and_remote_lists():
    assert {"email-Enron", "karate", "luxembourg_osm", "cities"} <= set(datasets.available())
    assert {"soc-LiveJournal1", "roadNet-CA", "kron_g500-logn20"} <= set(datasets.remote())
    for name in datasets.remote():
        meta = datasets.info(name)
        assert meta["url"].startswith("https://") and "vertices" in meta


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ValueError, match="karate"):
        datasets.load("no-such-graph")


def make_archive(tmp_path, body):
    mtx = ("%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 2\n4 3\n" if body
           is None else body)
    tar_path = tmp_path / "tiny.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tf:
        data = mtx.encode()
        info = tarfile.TarInfo("tiny/tiny.mtx")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return tar_path


def test_download_convert_and_cache(tmp_path, monkeypatch):
    tar_path = make_archive(tmp_path, None)
    cache = tmp_path / "cache"
    import hashlib
    digest = hashlib.sha256(tar_path.read_bytes()).hexdigest()
    datasets.register("tiny", url=tar_path.as_uri(), format="tar-mtx", member="tiny/tiny.mtx",
                      vertices=4, edges=3, directed=False, sha256=digest)
    G = datasets.load("tiny", cache_dir=str(cache), progress=False)
    assert G.num_vertices == 4 and G.num_edges == 6 and not G.directed
    npz = cache / "tiny.npz"
    assert npz.exists()
    assert not any(p.name.startswith(".part-") for p in cache.iterdir())
    # the second load reads the converted form, with no download
    monkeypatch.setattr(datasets, "_download", lambda *a, **k: pytest.fail("downloaded again"))
    H = datasets.load("tiny", cache_dir=str(cache))
    assert np.array_equal(G.column_indices, H.column_indices)
    assert np.array_equal(gunpy.bfs(H, 0, backend="cpu").depth, [0, 1, 2, 3])


def test_bad_checksum_leaves_nothing(tmp_path):
    tar_path = make_archive(tmp_path, None)
    cache = tmp_path / "cache"
    datasets.register("tiny-bad", url=tar_path.as_uri(), format="tar-mtx", sha256="0" * 64)
    with pytest.raises(ValueError, match="checksum"):
        datasets.load("tiny-bad", cache_dir=str(cache), progress=False)
    assert list(cache.iterdir()) == []


def test_unknown_checksum_is_recorded_then_verified(tmp_path):
    tar_path = make_archive(tmp_path, None)
    cache = tmp_path / "cache"
    datasets.register("tiny-rec", url=tar_path.as_uri(), format="tar-mtx", sha256=None)
    datasets.fetch("tiny-rec", cache_dir=str(cache), progress=False)
    record = cache / "tiny.tar.gz.sha256"
    assert record.exists()
    # a later, different archive under the same name fails against the record
    os.unlink(cache / "tiny-rec.npz")
    with open(cache / "tiny.tar.gz", "ab") as f:
        f.write(b"tampered")
    with pytest.raises(ValueError, match="checksum"):
        datasets.fetch("tiny-rec", cache_dir=str(cache), progress=False)


def test_interrupted_download_leaves_no_partial_file(tmp_path, monkeypatch):
    tar_path = make_archive(tmp_path, None)
    cache = tmp_path / "cache"
    datasets.register("tiny-cut", url=tar_path.as_uri(), format="tar-mtx", sha256=None)

    class Broken:
        headers = {"Content-Length": "1000"}

        def __init__(self):
            self.n = 0

        def read(self, size):
            self.n += 1
            if self.n > 1:
                raise ConnectionResetError("connection dropped")
            return b"x" * 10

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(datasets.urllib.request, "urlopen", lambda url: Broken())
    with pytest.raises(ConnectionResetError):
        datasets.fetch("tiny-cut", cache_dir=str(cache), progress=False)
    assert list(cache.iterdir()) == []


def test_no_download_when_not_cached(tmp_path):
    datasets.register("tiny-off", url="file:///nonexistent.tar.gz", format="tar-mtx")
    with pytest.raises(FileNotFoundError, match="fetch"):
        datasets.load("tiny-off", cache_dir=str(tmp_path), download=False)


# ----------------------------------------------------------------------------- the .npz cache
def _cached_tiny(tmp_path, name):
    import hashlib
    tar_path = make_archive(tmp_path, None)
    cache = tmp_path / "cache"
    datasets.register(name, url=tar_path.as_uri(), format="tar-mtx", member="tiny/tiny.mtx",
                      vertices=4, edges=3, directed=False,
                      sha256=hashlib.sha256(tar_path.read_bytes()).hexdigest())
    datasets.load(name, cache_dir=str(cache), progress=False)
    return cache, cache / f"{name}.npz"


def _npz_bytes(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


GOOD = dict(row_offsets=np.array([0, 1, 3, 5, 6]), column_indices=np.array([1, 0, 2, 1, 3, 2],
            dtype=np.int32), values=np.zeros(0), weighted=False, directed=False,
            node_labels=np.zeros(0, dtype=np.int64), has_labels=False)


def _tamper(kind, data):
    rng = np.random.default_rng(len(kind))
    if kind == "truncated":
        return data[: len(data) // 2]
    if kind == "bit_flips":          # in the arrays' bytes (the zip's CRC no longer holds)
        b = bytearray(data)
        for i in rng.integers(len(b) // 3, len(b) // 2, 8):
            b[i] ^= 1 << int(rng.integers(8))
        return bytes(b)
    if kind == "garbage":
        return bytes(rng.integers(0, 256, 300, dtype=np.uint8))
    if kind == "empty":
        return b""
    if kind == "column_out_of_range":   # a valid file whose CSR would read past the arrays
        return _npz_bytes(**{**GOOD, "column_indices": np.array([1, 0, 2, 1, 3, 99],
                                                                dtype=np.int32)})
    if kind == "offsets_decrease":
        return _npz_bytes(**{**GOOD, "row_offsets": np.array([0, 4, 3, 5, 6])})
    if kind == "float_offsets":
        return _npz_bytes(**{**GOOD, "row_offsets": np.array([0.0, 1, 3, 5, 6])})
    if kind == "pickle":                # an object array: np.load would need allow_pickle
        return _npz_bytes(**{**GOOD, "node_labels": np.array([print], dtype=object),
                             "has_labels": True})
    if kind == "missing_member":
        return _npz_bytes(**{k: v for k, v in GOOD.items() if k != "values"})
    if kind == "huge_shape":            # a header that claims far more data than the member
        return data.replace(b"'shape': (6,)", b"'shape': (9999999999,)", 1)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["truncated", "bit_flips", "garbage", "empty",
                                  "column_out_of_range", "offsets_decrease", "float_offsets",
                                  "pickle", "missing_member", "huge_shape"])
def test_damaged_npz_is_refused_then_converted_again(tmp_path, kind):
    cache, npz = _cached_tiny(tmp_path, f"tiny-{kind}")
    data = _tamper(kind, npz.read_bytes())
    npz.write_bytes(data)
    with pytest.raises(gunpy.GraphFormatError, match="damaged dataset file"):
        datasets._read_npz(str(npz))
    with pytest.warns(RuntimeWarning, match="converting .* again"):
        G = datasets.load(f"tiny-{kind}", cache_dir=str(cache), progress=False)
    assert np.array_equal(gunpy.bfs(G, 0, backend="cpu").depth, [0, 1, 2, 3])
    assert datasets.load(f"tiny-{kind}", cache_dir=str(cache)).num_edges == 6   # repaired


def test_damaged_npz_without_its_download_is_a_clear_error(tmp_path):
    cache, npz = _cached_tiny(tmp_path, "tiny-gone")
    os.unlink(cache / "tiny.tar.gz")
    npz.write_bytes(b"not a zip")
    with pytest.warns(RuntimeWarning), pytest.raises(FileNotFoundError, match="fetch"):
        datasets.load("tiny-gone", cache_dir=str(cache), download=False, progress=False)


def test_cli_damaged_cached_dataset_one_line(tmp_path, monkeypatch, capsys):
    from gunpy.cli import main
    cache, npz = _cached_tiny(tmp_path, "tiny-cli")
    os.unlink(cache / "tiny.tar.gz")
    os.unlink(tmp_path / "tiny.tar.gz")          # and the "server" has lost it too
    npz.write_bytes(npz.read_bytes()[:100])
    monkeypatch.setenv("GUNPY_CACHE", str(cache))
    with pytest.warns(RuntimeWarning):
        rc = main(["run", "bfs", "--dataset", "tiny-cli", "--backend", "cpu", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1].startswith("gunpy: error: ") and "Traceback" not in "".join(err)
