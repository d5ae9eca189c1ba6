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
