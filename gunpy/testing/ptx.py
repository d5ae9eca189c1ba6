"""Compile-only CUDA backends: kernels to PTX, to sm_90 cubins, through NVIDIA's ptxas.

:class:`PtxBackend` compiles every kernel it is asked to launch instead of running it;
with ``link=True`` / ``ptxas=`` it also turns them into machine code and checks their
resources (the ``--cuda-mode=cubin`` test mode); :func:`machine_code_table` is that
mode's per-kernel table; :func:`oldest_ptxas` fetches CUDA 13.0's assembler.
"""

import sys
import time

import numba
import numpy as np

from gunpy.backends.launcher import check_launchable

__all__ = ["PtxBackend", "KernelReport", "machine_code_reports", "machine_code_records",
           "machine_code_table", "oldest_ptxas", "ptxas_version", "OLDEST_CUDA13_NVCC"]


class PtxBackend:
    """A compile-only CUDA backend: kernels become PTX for ``cc``, nothing runs.

    Arrays are NumPy arrays of the dtypes the GPU would use, so numba infers the
    same argument types as for device arrays. ``compiled`` maps
    ``(kernel name, argument types)`` to the PTX text.

    ``link=True`` also turns each kernel into a cubin for ``cc`` the way a launch
    does (numba-cuda's linker: nvJitLink) and checks it at the launch's block size
    (``block_size``, default 256); ``ptxas=PATH`` also assembles the PTX a driver
    would be handed (capped to that ptxas's ISA) with NVIDIA's assembler. Both
    fail on spills, local memory, static shared memory over 48 KB or a block too
    large for the kernel (:class:`gunpy.backends.toolchain.ToolchainError`);
    ``resources`` maps kernel names to their :class:`KernelReport`.
    """

    #: what a ``PtxBackend()`` made without ``link`` / ``ptxas`` gets (the cubin test mode
    #: sets these so that every compile-only run also links and assembles)
    defaults = {"link": False, "ptxas": None}

    def __new__(cls, cc=(9, 0), *, block_size=256, link=None, ptxas=None):
        from gunpy.backends.cuda import CudaBackend

        class _Ptx(_PtxMixin, CudaBackend):
            pass

        obj = object.__new__(_Ptx)
        obj._setup(cc, block_size=block_size, link=link, ptxas=ptxas)
        return obj


class _PtxMixin:
    name = "cuda"
    #: reads that return a non-zero value after each :meth:`synchronize` (see :meth:`read`)
    read_budget = 24

    def _setup(self, cc, *, block_size=256, link=None, ptxas=None):
        if link is None:
            link, ptxas = PtxBackend.defaults["link"], ptxas or PtxBackend.defaults["ptxas"]
        self.cc = tuple(cc)
        self.block_size = block_size
        self.link = bool(link or ptxas)
        self.ptxas = ptxas
        self.resources = {}
        self._linked = {}  # (kernel, argument types) -> its KernelReport
        self.max_blocks = 132 * 32
        self.num_sms = 132
        self.compiled = {}
        self._reads = 0

    def __init__(self, *args, **kwargs):  # CudaBackend.__init__ would query a device
        pass

    def __hash__(self):
        return id(self)

    # arrays live on the host
    def _alloc(self, n, dtype):
        return np.zeros(int(n), dtype=dtype)

    def asarray(self, host):
        return np.array(host, copy=True)

    def fill(self, arr, value):
        from gunpy.backends import cuda as cuda_backend
        arr[:] = value
        self.run(cuda_backend.fill_kernel, arr.shape[0], arr, arr.dtype.type(value),
                 arr.shape[0])

    def to_host(self, arr):
        return np.array(arr, copy=True)

    def read(self, arr, i=0):
        # Nothing runs, so what a kernel "wrote" is meaningless. The first reads after
        # a synchronize (an enactor's start) are never 0, so frontiers look non-empty and
        # the operators' paths are walked; later ones are 0, so every loop ends (an empty
        # frontier, a converged primitive) without any dry-run branch in gunpy itself.
        self._reads += 1
        if self._reads > self.read_budget:
            return 0
        return max(1, arr[i].item())

    def write(self, arr, i, value):
        arr[i] = value

    def copy_in(self, arr, at, host):
        arr[at:at + host.shape[0]] = host

    def copy(self, src, dst, n):
        dst[:n] = src[:n]

    def head_to_host(self, arr, n):
        return arr[:n].copy()

    def read_head(self, arr, n):
        # counters read together follow read()'s rule (non-zero, then 0 after the budget)
        return np.array([self.read(arr, i) for i in range(n)], dtype=arr.dtype)

    def synchronize(self):
        self._reads = 0

    def run(self, kernel, items, *args, block_size=None, blocks=None, shared=0):
        from numba import cuda
        pyfunc = kernel.py_func
        argtypes = tuple(numba.typeof(a) for a in args)
        key = (pyfunc, argtypes)
        if key not in self.compiled:
            check_launchable(kernel, args, argtypes)
            bounds = getattr(kernel, "targetoptions", {}).get("launch_bounds")
            same = _same_kernel(pyfunc, argtypes, self.cc, bounds)
            ptx = _compiled_ptx.get(same)
            if ptx is None:
                ptx, _ = cuda.compile_ptx(pyfunc, argtypes, cc=self.cc, launch_bounds=bounds)
                if same is not None:
                    _compiled_ptx[same] = ptx
            self.compiled[key] = ptx
        if self.link and items > 0:
            threads = block_size or self.block_size
            rep = self._linked.get(key)
            if rep is None or threads not in rep.block_sizes:  # link (or check) once
                name = (pyfunc.__module__.replace("gunpy.", "") + ":"
                        + pyfunc.__qualname__.replace("<locals>.", ""))
                rep = self._linked[key] = _machine_code(self.compiled[key], self.cc,
                                                        self.ptxas, name, threads)
            self.resources[pyfunc.__qualname__] = rep

    def kernel_names(self):
        return sorted({f.__qualname__ for f, _ in self.compiled})


#: PTX compiled in this process, by what the kernel is made of (:func:`_same_kernel`): a
#: kernel factory called again, by another backend or test, makes a new function whose PTX
#: is the same
_compiled_ptx = {}


def _same_kernel(pyfunc, argtypes, cc, bounds):
    """A key equal for two kernels that compile to the same PTX (the persistent cache's
    fingerprint of the function and what it reaches, and the argument types); None when
    the function has no stable fingerprint."""
    from gunpy._fingerprint import Uncacheable, _type_key, fingerprint
    try:
        return (fingerprint(pyfunc), _type_key(argtypes), tuple(cc), bounds)
    except Uncacheable:
        return None


#: every distinct kernel linked in this process: PTX hash -> KernelReport (the cubin mode's table)
machine_code_reports = {}


class KernelReport:
    """One kernel as machine code: nvJitLink's cubin (the launch path), and ptxas's view of
    the PTX a driver would get (capped to the oldest CUDA 13 driver's ISA) when a ptxas is given."""

    def __init__(self, name, linked, assembled, cubin_bytes, ptxas_version):
        self.name, self.linked, self.assembled = name, linked, assembled
        self.cubin_bytes, self.ptxas_version = cubin_bytes, ptxas_version
        self.block_sizes = set()



def machine_code_records():
    """This process's linked kernels as plain rows (PTX hash -> the table's facts), which
    worker processes hand to the one that prints the table (pytest-xdist)."""
    return {key: {"name": r.name, "registers": r.linked.registers, "spills": r.linked.spills,
                  "stack": r.linked.stack, "shared": r.linked.shared,
                  "max_threads": r.linked.max_threads, "blocks": sorted(r.block_sizes),
                  "ptxas": None if r.assembled is None else r.assembled.registers,
                  "seconds": getattr(r, "seconds", 0.0)}
            for key, r in machine_code_reports.items()}


def machine_code_table(records=None):
    """The cubin mode's table: one row per kernel (its variants' worst case), as
    ``(kernel, variants, registers, spills, local, static shared, largest block,
    block used, ptxas registers)``; and the seconds spent linking and assembling.
    ``records``: :func:`machine_code_records` of one or more processes (merged by
    PTX hash); this process's by default."""
    records = machine_code_records() if records is None else records
    by_name = {}
    for rec in records.values():
        by_name.setdefault(rec["name"], []).append(rec)
    rows = []
    for name, recs in sorted(by_name.items()):
        ptxas_regs = [r["ptxas"] for r in recs if r["ptxas"] is not None]
        rows.append((name, len(recs), max(r["registers"] for r in recs),
                     max(r["spills"] for r in recs), max(r["stack"] for r in recs),
                     max(r["shared"] for r in recs), min(r["max_threads"] for r in recs),
                     max(max(r["blocks"], default=0) for r in recs),
                     max(ptxas_regs) if ptxas_regs else "-"))
    return rows, sum(r["seconds"] for r in records.values())


def _machine_code(ptx, cc, ptxas, name, threads):
    """Link ``ptx`` to a cubin (and assemble it with ``ptxas``) once; check it runs ``threads``.

    Raises :class:`gunpy.backends.toolchain.ToolchainError` on a failed link or
    assembly, any spill, any local memory, static shared memory over 48 KB, or a
    block larger than the kernel can launch.
    """
    import hashlib

    from gunpy.backends import toolchain as tc
    key = hashlib.sha256(ptx.encode()).hexdigest()
    rep = machine_code_reports.get(key)
    if rep is None:
        t0 = time.perf_counter()
        cubin, linked, _ = tc.link_cubin(ptx, cc)
        if len(linked) != 1:
            raise tc.ToolchainError(f"kernel {name}: expected one entry in the link log, "
                                    f"got {sorted(linked)}")
        linked = next(iter(linked.values()))
        assembled = version = None
        if ptxas:
            oldest = tc.isa_for_cuda(ptxas_version(ptxas))
            found, _ = tc.assemble(tc.cap_ptx(ptx, oldest), ptxas, arch=f"sm_{cc[0]}{cc[1]}")
            assembled = next(iter(found.values()))
            version = ptxas_version(ptxas)
        rep = KernelReport(name, linked, assembled, len(cubin), version)
        rep.seconds = time.perf_counter() - t0
        machine_code_reports[key] = rep
        for what, res in (("nvJitLink", linked), ("ptxas", assembled)):
            if res is None:
                continue
            if res.spills or res.stack:
                raise tc.ToolchainError(
                    f"kernel {name} ({what}): {res.spill_stores} B spill stores, {res.spill_loads} B "
                    f"spill loads, {res.stack} B stack (local memory) a thread")
            if res.shared > tc.SHARED_STATIC_LIMIT:
                raise tc.ToolchainError(f"kernel {name} ({what}): {res.shared} B of static shared "
                                        f"memory, over the {tc.SHARED_STATIC_LIMIT} B limit")
    if threads > rep.linked.max_threads:
        raise tc.ToolchainError(
            f"kernel {name} cannot run {threads} threads a block: it uses {rep.linked.registers} "
            f"registers a thread, so at most {rep.linked.max_threads}")
    rep.block_sizes.add(int(threads))
    return rep


#: the oldest CUDA 13 release: its assembler is what a R580 driver's PTX JIT matches
OLDEST_CUDA13_NVCC = "13.0.48"


def oldest_ptxas(*, install=True):
    """Path to the ptxas of CUDA ``OLDEST_CUDA13_NVCC`` (``$GUNPY_PTXAS`` first), or None.

    Fetched once from PyPI's ``nvidia-cuda-nvcc`` wheel (no dependencies, about
    37 MB) into ``toolchains/`` beside gunpy's kernel cache; never imported:
    only the executable is used.
    """
    import os
    import subprocess

    from gunpy import _jitcache
    env = os.environ.get("GUNPY_PTXAS")
    if env:
        return env if os.path.exists(env) else None
    root = os.path.join(os.path.dirname(_jitcache.cache_dir()), "toolchains",
                        f"nvidia-cuda-nvcc-{OLDEST_CUDA13_NVCC}")
    exe = os.path.join(root, "nvidia", "cu13", "bin", "ptxas")
    if not os.path.exists(exe) and install:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "--target", root,
                        f"nvidia-cuda-nvcc=={OLDEST_CUDA13_NVCC}"],
                       capture_output=True, timeout=600)
    return exe if os.path.exists(exe) else None


def ptxas_version(ptxas):
    """``(major, minor)`` of a ptxas executable (``ptxas --version``)."""
    import re
    import subprocess
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        raise RuntimeError(f"{ptxas} --version printed no release: {out!r}")
    return int(m.group(1)), int(m.group(2))
