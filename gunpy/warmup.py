"""Fill the persistent kernel cache ahead of time, and carry it to another machine.

``gunpy warmup`` (or :func:`warmup`) runs each primitive with its default
options on a small Graph500 RMAT graph, unweighted and weighted; on the CPU
twice, once with every level as one thin chunk (the single-pass builds) and
once with the work cut into as many chunks as possible (the parallel builds),
so that every kernel build a default call reaches is compiled and written to the kernel cache
(:mod:`gunpy._jitcache`). The kernels depend on the argument types, not on the
graph, so any graph with fewer than 2**31 vertices then starts from the cache.
For containers and CI: run it once after installing.

``gunpy warmup --backend cuda --arch sm_90`` (``warmup("cuda", arch="sm_90")``)
builds the CUDA kernels for a GPU of that architecture on a machine with no GPU
and no driver: numba's dispatchers are given a stand-in device of that compute
capability (:func:`stand_in_device`), each kernel a primitive would launch is
compiled and linked to a cubin with nvJitLink, as its first launch would do,
and saved under the key a process on such a GPU computes (a compile-only
backend walks the primitives: its reads are never 0 at first, so every operator
path is taken, then 0, so every loop ends).

:func:`export_cache` (``gunpy cache export FILE``) writes this environment's
entries to a tar.xz archive with a manifest (the environment, the versions,
the targets, each entry's SHA-256); :func:`import_cache` (``gunpy cache import
FILE``) checks the archive (the manifest's hashes, names, sizes and member
kinds: no path leaves the cache, nothing but regular files) and signs each
entry with this machine's key. The archive itself carries no signature that
this machine could check: importing it is the user's statement that it comes
from a machine they trust, like installing a wheel.
"""

import contextlib
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import tarfile
import time
import types
import zlib

__all__ = ["warmup", "stand_in_device", "parse_arch", "export_cache", "import_cache",
           "describe"]


def warmup(backend="auto", primitives=None, *, scale=10, progress=None, arch=None):
    """Compile (or load) every kernel the default calls of ``primitives`` use.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
    primitives : sequence of str, optional
        Registered primitives' names (:func:`gunpy.registry.names`; default: all).
    scale : int, default 10
        RMAT scale of the graph the primitives run on.
    progress : callable, optional
        Called as ``progress(name, seconds)`` after each primitive.
    arch : str, optional
        ``"sm_90"`` (or ``"9.0"``): build the CUDA kernels for that architecture
        without a GPU (``backend`` must be ``"cuda"`` or ``"auto"``); nothing runs.

    Returns
    -------
    dict
        Seconds per primitive.
    """
    from gunpy import generators, registry
    from gunpy.backends import get_backend
    entries = [registry.primitive(name) for name in (primitives or registry.names())]
    if arch is not None:
        if backend not in ("auto", "cuda"):
            raise ValueError(f"arch={arch!r} builds CUDA kernels: backend must be 'cuda', "
                             f"got {backend!r}")
        cc = parse_arch(arch)
        with stand_in_device(cc):
            return _walk(entries, _offline_backend(cc), scale, progress, generators)
    return _walk(entries, get_backend(backend), scale, progress, generators)


def _walk(entries, be, scale, progress, generators):
    # unweighted and weighted graphs reach different kernels (edge weights are read or not)
    graphs = [generators.rmat(scale, seed=1), generators.rmat(scale, seed=1, weighted=True)]
    times = {}
    for entry in entries:
        name = entry.name
        t0 = time.perf_counter()
        for _ in be.work_splits():
            for g in graphs:
                # from the vertex of highest degree, so that the traversals go somewhere
                entry.warm(g, int(g.out_degrees().argmax()), be)
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times


# ----------------------------------------------------------------------------- no GPU
_ARCH = re.compile(r"(?:sm_|compute_)?(\d+)(?:\.(\d+))?a?")


def parse_arch(arch):
    """``"sm_90"``, ``"90"``, ``"9.0"`` or ``(9, 0)`` -> ``(9, 0)``."""
    if isinstance(arch, (tuple, list)) and len(arch) == 2:
        return int(arch[0]), int(arch[1])
    m = _ARCH.fullmatch(str(arch).strip().lower())
    if m is None:
        raise ValueError(f"arch must look like 'sm_90' or '9.0', got {arch!r}")
    major, minor = m.group(1), m.group(2)
    if minor is None:
        if len(major) < 2:
            raise ValueError(f"arch must look like 'sm_90' or '9.0', got {arch!r}")
        major, minor = major[:-1], major[-1]
    return int(major), int(minor)


@contextlib.contextmanager
def stand_in_device(cc=(9, 0)):
    """numba-cuda compiles for a device of compute capability ``cc`` that is not there.

    Inside, numba's current device and context are a stand-in with that compute
    capability (all that compiling, linking and gunpy's cache key ask of them),
    and binding a compiled kernel links its cubin (nvJitLink: no driver) instead
    of loading it. Nothing can launch; what is compiled is what a launch on such a
    device would compile, so the cache holds what a process there will look up.
    """
    from numba.cuda import api, compiler, dispatcher
    from numba.cuda.cudadrv import devices
    device = types.SimpleNamespace(compute_capability=tuple(cc), id=0, MULTIPROCESSOR_COUNT=132)
    context = types.SimpleNamespace(device=device)
    patches = [(devices, "get_context", lambda *a, **k: context),
               (dispatcher, "get_context", lambda *a, **k: context),
               (dispatcher, "get_current_device", lambda: device),
               (compiler, "get_current_device", lambda: device),
               (api, "get_current_device", lambda: device),
               # a kernel is bound to make its cubin (so that the cache holds one): link only
               (dispatcher._Kernel, "bind", lambda self: self._codelibrary.get_cubin())]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    for obj, name, value in patches:
        setattr(obj, name, value)
    try:
        yield device
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)


def _offline_backend(cc):
    """A compile-only CUDA backend whose launches compile through the kernels' own
    dispatchers (and so through the persistent cache) instead of running."""
    from gunpy.backends.cuda import CudaBackend
    from gunpy.testing.ptx import _PtxMixin

    class CudaBackend(_Offline, _PtxMixin, CudaBackend):  # noqa: F811
        # named as the real one: nothing here reaches a kernel's key, and if a kernel ever
        # captured its backend, its fingerprint would name the class the same way
        pass

    be = CudaBackend.__new__(CudaBackend)
    be._setup(cc, link=False)
    return be


class _Offline:
    def run(self, kernel, items, *args, block_size=None, blocks=None, shared=0):
        if items <= 0:
            return  # never launched, never compiled: as on the GPU
        # the argument types numba's launch path computes (typeof for a launch argument;
        # a NumPy array types as the device array of its dtype would), then its compile
        from gunpy.backends.launcher import check_launchable
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        if argtypes not in kernel.overloads:
            check_launchable(kernel, args, argtypes)
        kernel.compile(argtypes)


# ----------------------------------------------------------------------------- carry
FORMAT = "gunpy kernel cache"
#: the largest archive member and the most an archive may unpack to
MEMBER_LIMIT = 256 << 20
TOTAL_LIMIT = 4 << 30
_FOLDER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,250}")
_FILE = re.compile(r"[0-9a-f]{32}\.gpk")


def _target_of(key):
    """``"cuda sm_90 (CUDA 13)"`` or ``"cpu <name>"`` from an entry's key text (no evaluation)."""
    text = key.decode("utf-8", "replace")
    name = text.split(":", 1)[0]
    m = re.search(r"\('sm', \((\d+), (\d+)\), 'CUDA', (\d+)\)\)$", text)
    if name == "cuda" and m:
        return f"cuda sm_{m.group(1)}{m.group(2)} (CUDA {m.group(3)})"
    m = re.search(r"\('[^']*', '([^']*)', '[^']*'\)\)$", text)
    return f"{name} {m.group(1)}" if m else name


def export_cache(path, *, target=None):
    """Write this environment's cache entries (``target``: only ``"cuda"`` or ``"cpu"`` ones)
    to the tar.xz archive ``path``.

    Entries that fail authentication here are left out (and counted). Returns
    ``{"path", "environment", "versions", "entries", "skipped", "targets", "bytes"
    (unpacked), "compressed"}``. Raises ``ValueError`` when there is nothing to export.
    """
    from gunpy import _jitcache as jc
    if target not in (None, "cuda", "cpu"):
        raise ValueError(f"target must be 'cuda' or 'cpu', got {target!r}")
    root = jc.cache_dir()
    here = jc.environment_folder()
    key_secret = jc.secret()
    entries, blobs, skipped, targets = {}, [], 0, set()
    for env, sub, files in jc._walk(root):
        if env != here:
            continue
        folder = os.path.basename(sub)
        for f in sorted(x for x in files if x.endswith(jc._SUFFIX)):
            try:
                with open(os.path.join(sub, f), "rb") as fh:
                    data = fh.read()
            except OSError:
                skipped += 1
                continue
            body = jc.verify_entry(key_secret, data)
            if body is None or jc.entry_name(jc.entry_key(data)[0]) != f:
                skipped += 1
                continue
            key = jc.entry_key(data)[0]
            if target is not None and not key.startswith(target.encode() + b":"):
                continue
            # the MAC means nothing on another machine (its key differs): zeros travel
            data = jc._MAGIC + bytes(jc._MAC) + data[len(jc._MAGIC) + jc._MAC:]
            name = f"{folder}/{f}"
            entries[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
            blobs.append((name, data))
            targets.add(_target_of(key))
    if not blobs:
        raise ValueError(f"no kernels of this environment ({here}) in {root} to export"
                         + (f" for target {target}" if target else ""))
    manifest = {"format": FORMAT, "version": 1, "environment": here,
                "environment_key": jc.environment_key(), "versions": jc.environment(),
                "targets": sorted(targets), "created": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                "count": len(blobs), "bytes": sum(len(d) for _, d in blobs), "entries": entries}
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with tarfile.open(tmp, "w:xz", preset=6) as tar:
            _add(tar, "manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode())
            for name, data in blobs:
                _add(tar, f"entries/{name}", data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {"path": path, "environment": here, "versions": manifest["versions"],
            "entries": len(blobs), "skipped": skipped, "targets": manifest["targets"],
            "bytes": manifest["bytes"], "compressed": os.path.getsize(path)}


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def _refuse(path, why):
    return ValueError(f"{path}: not imported: {why}")


def import_cache(path):
    """Check the archive ``path`` (from :func:`export_cache`) and add its entries to this
    machine's cache, each signed with this machine's key.

    Everything is checked before anything is added: the manifest comes first and
    names every entry with its size and SHA-256; every member is a regular file
    named ``entries/<kernel>/<hash>.gpk``, listed once, of the listed size and hash,
    holding a key of the manifest's environment under its own name. Raises
    ``ValueError`` naming the first problem otherwise (nothing is added).

    Returns ``{"path", "environment", "versions", "entries", "targets", "here"
    (this environment's folder), "differences" ([(what, archive's, here)]: why the
    entries would not be used here; empty when they will)}``.
    """
    from gunpy import _jitcache as jc
    try:
        tar = tarfile.open(path, "r|*")
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        raise _refuse(path, f"not a kernel cache archive ({exc})") from None
    root = jc.cache_dir()
    stage = None
    try:
        with tar:
            members = iter(tar)
            manifest = _read_manifest(path, tar, members)
            env = manifest["environment"]
            listed = manifest["entries"]
            key_secret = jc.secret()
            problem = jc._probe_dir(root)
            if problem:
                raise jc.CacheError(f"the kernel cache cannot be written: {problem}")
            os.makedirs(root, exist_ok=True)
            stage = os.path.join(root, f".import-{os.getpid()}-{time.time_ns()}")
            os.makedirs(stage)
            seen, targets = set(), set()
            for member in _checked(path, tar, members):
                if not member.isreg():
                    raise _refuse(path, f"member {member.name!r} is not a regular file")
                parts = member.name.split("/")
                if len(parts) != 3 or parts[0] != "entries" or not _FOLDER.fullmatch(parts[1]) \
                        or not _FILE.fullmatch(parts[2]):
                    raise _refuse(path, f"unexpected member {member.name[:100]!r}")
                name = f"{parts[1]}/{parts[2]}"
                if name not in listed or name in seen:
                    raise _refuse(path, f"member {name!r} is "
                                        + ("listed twice" if name in seen else "not in the manifest"))
                if member.size != listed[name]["bytes"] or member.size > MEMBER_LIMIT:
                    raise _refuse(path, f"member {name!r} has {member.size} bytes, the manifest "
                                        f"says {listed[name]['bytes']}")
                data = tar.extractfile(member).read(member.size + 1)
                if len(data) != member.size \
                        or hashlib.sha256(data).hexdigest() != listed[name]["sha256"]:
                    raise _refuse(path, f"member {name!r} does not match its SHA-256 in the "
                                        f"manifest (damaged in transit?)")
                parsed = jc.entry_key(data)
                if parsed is None:
                    raise _refuse(path, f"member {name!r} is not a kernel cache entry")
                key, body = parsed
                if jc.entry_name(key) != parts[2] or key.split(b":")[1:2] != [env.encode()]:
                    raise _refuse(path, f"member {name!r} holds a key of another name or "
                                        f"environment")
                seen.add(name)
                targets.add(_target_of(key))
                jc.write_entry(os.path.join(stage, parts[1], parts[2]),
                               jc.pack_entry(key_secret, key, body))
            missing = set(listed) - seen
            if missing:
                raise _refuse(path, f"{len(missing)} entries of the manifest are missing "
                                    f"(e.g. {sorted(missing)[0]!r}): a truncated archive?")
            # all checked: move the signed entries into place
            for name in sorted(seen):
                folder, f = name.split("/")
                dest = os.path.join(root, env, folder, f)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                os.replace(os.path.join(stage, folder, f), dest)
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, json.JSONDecodeError,
            UnicodeDecodeError) as exc:
        raise _refuse(path, f"damaged archive ({type(exc).__name__}: {exc})") from None
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    here = jc.environment_folder()
    return {"path": path, "environment": env, "versions": manifest["versions"],
            "entries": len(seen), "targets": sorted(targets), "here": here,
            "differences": _differences(manifest, targets, here)}


def _read_manifest(path, tar, members):
    first = next(members, None)
    opening = None if first is None else first.name  # the archive's first member's name
    if opening != "manifest.json" or not first.isreg() or first.size > MEMBER_LIMIT:
        raise _refuse(path, "it does not open with a manifest.json (not a kernel cache archive)")
    manifest = json.loads(tar.extractfile(first).read(first.size + 1))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT \
            or manifest.get("version") != 1:
        raise _refuse(path, "its manifest is not a gunpy kernel cache manifest (version 1)")
    env, env_key, entries = (manifest.get(k) for k in ("environment", "environment_key",
                                                        "entries"))
    if not (isinstance(env, str) and isinstance(env_key, str) and isinstance(entries, dict)):
        raise _refuse(path, "its manifest lacks the environment or the entries")
    if env != "env-" + hashlib.sha256(env_key.encode()).hexdigest()[:16]:
        raise _refuse(path, "its manifest's environment does not match its environment key")
    total = 0
    for name, e in entries.items():
        if not (isinstance(e, dict) and isinstance(e.get("bytes"), int)
                and isinstance(e.get("sha256"), str)):
            raise _refuse(path, f"its manifest's entry {str(name)[:100]!r} is malformed")
        total += e["bytes"]
    if total > TOTAL_LIMIT or manifest.get("count") != len(entries):
        raise _refuse(path, "its manifest's entry count or total size is implausible")
    if not isinstance(manifest.get("versions"), dict):
        manifest["versions"] = {}
    return manifest


def _checked(path, tar, members):
    """The members after the manifest, stopping at the first that could leave the cache."""
    for member in members:
        name = member.name
        if name.startswith("/") or "\\" in name or ".." in name.split("/") or "\0" in name:
            raise _refuse(path, f"member {name[:100]!r} has an unsafe path")
        yield member


def _differences(manifest, targets, here):
    """Why an archive's entries would not be used by this environment (``[]``: they will)."""
    from gunpy import _jitcache as jc
    if manifest["environment"] == here:
        diffs = []
    else:
        mine, theirs = jc.environment(), manifest["versions"]
        diffs = [(k, theirs.get(k), mine.get(k)) for k in mine if theirs.get(k) != mine.get(k)]
        if not diffs:
            diffs = [("environment", manifest["environment"], here)]
    cuda = [t for t in targets if t.startswith("cuda ")]
    if cuda:
        try:
            from numba.cuda.cudadrv import runtime
            major = f"CUDA {runtime.get_version()[0]}"
        except Exception:  # no CUDA runtime library here
            major = "no CUDA runtime"
        if not any(f"({major})" in t for t in cuda):
            diffs.append(("CUDA", ", ".join(cuda), major))
    return diffs


def describe(versions):
    """``"gunpy 0.1.0, Python 3.12, numba 0.68.1, numba-cuda 0.30.4"`` from an environment."""
    names = {"gunpy": "gunpy", "python": "Python", "numba": "numba", "numba-cuda": "numba-cuda"}
    return ", ".join(f"{names[k]} {versions[k]}" for k in names if k in versions)
