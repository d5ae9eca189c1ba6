"""Carrying the kernel cache to another machine: built without a GPU, exported, imported.

The CUDA kernels are built here for a stand-in device of compute capability 9.0
(``gunpy warmup --arch sm_90``: compiled and linked with nvJitLink, no driver);
a new process with a different key, given the same stand-in, plays the GPU host
and must find every kernel under the keys it computes. Archives that were damaged
or built to escape the cache are refused with nothing written.
"""

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

from gunpy import _jitcache as jc
from gunpy import warmup as carry

ENV_KEYS = ("GUNPY_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "GUNPY_KERNEL_CACHE",
            "GUNPY_CACHE_KEY_FILE", "XDG_CONFIG_HOME")

# the GPU host: a fresh process, the same stand-in device, its own key
GPU_PROCESS = """
import json
import numpy as np
from gunpy import _jitcache, warmup
with warmup.stand_in_device((9, 0)):
    be = warmup._offline_backend((9, 0))
    be.fill(np.zeros(8, np.int32), 1)
    be.fill(np.zeros(8, np.float64), 2.5)
print(json.dumps({"counters": _jitcache.counters, "env": _jitcache.environment_folder()}))
"""


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """This process's cache and key under ``tmp_path`` (``a``); returns a function that
    points them elsewhere (another machine)."""
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)

    def use(name):
        monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path / name / "kernels"))
        monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(tmp_path / name / "key" / "cache.key"))
        return tmp_path / name

    use("a")
    return use


def _entries(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                  if f.endswith(".gpk"))


def test_build_export_import_then_a_gpu_process_hits(tmp_path, private_cache, monkeypatch):
    import numba
    if numba.config.ENABLE_CUDASIM:
        pytest.skip("numba's simulator compiles nothing")
    from gunpy.backends.cuda import fill_kernel
    # what this process compiled before (a GPU run's earlier tests) is not looked for again
    monkeypatch.setattr(fill_kernel, "overloads", {})
    jc.reset_counters()
    with carry.stand_in_device((9, 0)):
        be = carry._offline_backend((9, 0))
        be.fill(np.zeros(8, np.int32), 1)
        be.fill(np.zeros(8, np.float64), 2.5)
    assert jc.counters["misses"] == jc.counters["saved"] == 2
    built = _entries(tmp_path / "a")
    assert len(built) == 2
    # what was saved is what a launch on sm_90 loads: a cubin for sm_90a, linked here
    body = jc.verify_entry(jc.secret(), open(built[0], "rb").read())
    assert body is not None and b"sm_90a" in bytes(body)

    archive = str(tmp_path / "kernels.tar.xz")
    out = carry.export_cache(archive, target="cuda")
    assert out["entries"] == 2 and out["targets"] == ["cuda sm_90 (CUDA 13)"]
    assert out["compressed"] < out["bytes"]
    assert jc.clear().removed == 2 and not _entries(tmp_path / "a")

    other = private_cache("gpu")  # the GPU host: its own cache folder and key
    r = carry.import_cache(archive)
    assert r["entries"] == 2 and r["differences"] == [] and r["environment"] == r["here"]
    assert len(_entries(other)) == 2
    env = {k: v for k, v in os.environ.items()}
    p = subprocess.run([sys.executable, "-c", GPU_PROCESS], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["env"] == r["here"]
    assert got["counters"]["hits"] == 2 and got["counters"]["misses"] == 0, got
    assert got["counters"]["rejected"] == 0


def test_offline_argument_types_are_a_launchs():
    """The compile-only walk types NumPy arrays; a launch types device arrays: the same."""
    import numba
    if numba.config.ENABLE_CUDASIM:
        pytest.skip("no device arrays under the simulator")
    from gunpy.backends.cuda import fill_kernel
    from gunpy.bench.launch import _fake_array
    for dtype in (np.int32, np.int64, np.uint32, np.float32, np.float64, np.bool_):
        assert fill_kernel.typeof_pyval(np.zeros(4, dtype)) == \
            fill_kernel.typeof_pyval(_fake_array(4, dtype)), dtype


@pytest.mark.parametrize("arch, cc", [("sm_90", (9, 0)), ("9.0", (9, 0)), ("90", (9, 0)),
                                      ("sm_120", (12, 0)), ((8, 6), (8, 6))])
def test_parse_arch(arch, cc):
    assert carry.parse_arch(arch) == cc


def test_parse_arch_refuses_nonsense():
    for bad in ("", "sm_", "9", "ampere", "sm_90;rm"):
        with pytest.raises(ValueError, match="sm_90"):
            carry.parse_arch(bad)


# ----------------------------------------------------------------------------- archives
ENV_KEY = repr((("gunpy", "test"), ("python", "3.12")))
ENV = "env-" + hashlib.sha256(ENV_KEY.encode()).hexdigest()[:16]


def _entry(i, env=ENV):
    key = f"cuda:{env}:" + repr((f"kernel {i}", "(int32,)", ("sm", (9, 0), "CUDA", 13)))
    # the MAC of an exported entry is zeros: it means nothing on another machine
    data = jc._MAGIC + bytes(jc._MAC) + jc.pack_entry(b"k" * 32, key, b"payload %d" % i)[
        len(jc._MAGIC) + jc._MAC:]
    return f"gunpy.ops.k{i}/{jc.entry_name(key)}", data


def _archive(path, entries, *, manifest=None, extra=(), skip=(), replace=None, env=ENV,
             env_key=ENV_KEY):
    """Write a tar.xz as ``export_cache`` would; ``extra``: more members (TarInfo, data);
    ``skip``: entries listed but left out; ``replace``: {name: bytes} stored instead."""
    listed = {n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in entries}
    man = {"format": carry.FORMAT, "version": 1, "environment": env, "environment_key": env_key,
           "versions": {"gunpy": "test"}, "targets": ["cuda sm_90 (CUDA 13)"], "count": len(listed),
           "bytes": sum(e["bytes"] for e in listed.values()), "entries": listed}
    man.update(manifest or {})
    with tarfile.open(path, "w:xz") as tar:
        carry._add(tar, "manifest.json", json.dumps(man).encode())
        for name, data in entries:
            if name not in skip:
                carry._add(tar, f"entries/{name}", (replace or {}).get(name, data))
        for info, data in extra:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return str(path)


def _nothing_written(root):
    return not os.path.exists(root) or not [f for _, _, fs in os.walk(root) for f in fs]


def test_a_good_archive_is_imported_and_signed_with_this_key(tmp_path, private_cache):
    entries = [_entry(i) for i in range(3)]
    r = carry.import_cache(_archive(tmp_path / "ok.tar.xz", entries))
    assert r["entries"] == 3 and r["environment"] == ENV
    # another environment than this one: imported, and said so
    assert r["differences"] and r["here"] == jc.environment_folder() != ENV
    key_secret = jc.secret()
    for name, _ in entries:
        data = open(os.path.join(jc.cache_dir(), ENV, name), "rb").read()
        assert jc.verify_entry(key_secret, data) is not None  # signed here, on import
    assert not [d for d in os.listdir(jc.cache_dir()) if d.startswith(".import-")]


def _member(name, kind=tarfile.REGTYPE, data=b"", linkname=""):
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, \
        linkname
    return info, data if kind == tarfile.REGTYPE else None


@pytest.mark.parametrize("case", ["flipped", "traversal", "absolute", "symlink", "hardlink",
                                  "device", "unlisted", "missing", "wrong_env", "wrong_name",
                                  "not_tar", "truncated_xz", "no_manifest"])
def test_a_tampered_archive_is_refused_with_nothing_written(tmp_path, private_cache, case):
    entries = [_entry(i) for i in range(3)]
    name0, data0 = entries[0]
    path = tmp_path / "bad.tar.xz"
    if case == "flipped":  # a bit flipped in transit: the manifest's SHA-256 catches it
        bad = bytearray(data0)
        bad[-3] ^= 0x10
        _archive(path, entries, replace={name0: bytes(bad)})
        match = "SHA-256"
    elif case == "traversal":
        _archive(path, entries, extra=[_member("entries/../../../evil.gpk", data=b"x")])
        match = "unsafe path"
    elif case == "absolute":
        _archive(path, entries, extra=[_member("/tmp/evil.gpk", data=b"x")])
        match = "unsafe path"
    elif case == "symlink":
        _archive(path, entries, extra=[_member("entries/gunpy.x/" + "0" * 32 + ".gpk",
                                               tarfile.SYMTYPE, linkname="/etc/passwd")])
        match = "not a regular file"
    elif case == "hardlink":
        _archive(path, entries, extra=[_member("entries/gunpy.x/" + "0" * 32 + ".gpk",
                                               tarfile.LNKTYPE, linkname="manifest.json")])
        match = "not a regular file"
    elif case == "device":
        _archive(path, entries, extra=[_member("entries/gunpy.x/" + "0" * 32 + ".gpk",
                                               tarfile.CHRTYPE)])
        match = "not a regular file"
    elif case == "unlisted":
        n, d = _entry(9)
        _archive(path, entries, extra=[_member(f"entries/{n}", data=d)])
        match = "not in the manifest"
    elif case == "missing":
        _archive(path, entries, skip={entries[2][0]})
        match = "missing"
    elif case == "wrong_env":  # the manifest's environment is not its key's hash
        _archive(path, entries, manifest={"environment": "env-0123456789abcdef"})
        match = "environment"
    elif case == "wrong_name":  # an entry moved under another key's name
        other = entries[1][0].split("/")[1]
        moved = [(name0.split("/")[0] + "/" + other, data0)] + entries[1:]
        _archive(path, moved)
        match = "another name"
    elif case == "not_tar":
        path.write_bytes(b"#!/bin/sh\nrm -rf /\n" * 10)
        match = "not a kernel cache archive"
    elif case == "truncated_xz":
        _archive(tmp_path / "ok.tar.xz", entries)
        data = (tmp_path / "ok.tar.xz").read_bytes()
        path.write_bytes(data[:len(data) // 2])
        match = "damaged|missing|not a kernel cache"
    elif case == "no_manifest":
        with tarfile.open(path, "w:xz") as tar:
            carry._add(tar, f"entries/{name0}", data0)
        match = "manifest"
    with pytest.raises(ValueError, match=match):
        carry.import_cache(str(path))
    assert _nothing_written(jc.cache_dir()), os.listdir(jc.cache_dir())


def test_cli_export_and_import_report_and_refuse(tmp_path, private_cache, capsys):
    from gunpy import cli
    assert cli.main(["cache", "export", str(tmp_path / "x.tar.xz")]) == 2  # nothing to export
    assert "no kernels" in capsys.readouterr().err
    good = _archive(tmp_path / "ok.tar.xz", [_entry(i) for i in range(2)])
    assert cli.main(["cache", "import", good]) == 0
    out = capsys.readouterr()
    assert f"imported 2 kernels from {good}" in out.out and "cuda sm_90 (CUDA 13)" in out.out
    assert "another environment" in out.err  # built for another gunpy: said, not hidden
    n, d = _entry(0)
    bad = _archive(tmp_path / "bad.tar.xz", [(n, d)], replace={n: d[:-1] + b"!"})
    assert cli.main(["cache", "import", bad]) == 2
    assert "not imported" in capsys.readouterr().err
