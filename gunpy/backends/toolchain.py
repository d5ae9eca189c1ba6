"""toolchain: which pieces turn gunpy's kernels into machine code, and whether the driver takes it.

A kernel goes numba IR -> **NVVM** (PTX text) -> a **linker** (PTX -> a cubin for
the device) -> the **driver** (loads the cubin). Two linkers can do the middle step:

``"nvjitlink"``
    nvJitLink, a library from the toolkit wheels (``nvidia-nvjitlink``). It
    assembles the PTX itself and hands the driver machine code. A cubin made
    by a newer toolkit of the same major version loads on an older driver of
    that major version (CUDA's minor-version compatibility), so the ``cu13``
    wheels work on every CUDA 13 driver (R580 and newer).
``"driver"``
    The driver's own linker (``cuLink*``), which JIT-compiles the PTX. A
    driver accepts PTX up to the ISA version of its own CUDA release only
    (CUDA 13.0: ISA 9.0), while NVVM writes the ISA of *its* release (NVVM
    13.5: ISA 9.5). Where the PTX is newer than the driver and the major
    versions match, gunpy caps the ``.version`` line to the driver's ISA
    (``"driver, PTX capped to ISA 9.0"``): gunpy's kernels use no PTX feature
    newer than ISA 8.0, and the oldest CUDA 13 assembler checks that in CI
    (``pytest --cuda-mode=cubin``).

numba-cuda links through ``cuda.core``'s ``Linker``, which uses nvJitLink when
it can load it and the driver's linker otherwise. gunpy does not leave that to
chance: :func:`plan` decides the path from the versions it reads, and
:func:`ensure_loadable` (run by ``CudaBackend()`` on a real GPU, before any
launch) checks that ``cuda.core`` will take the same path, installs the PTX
cap where one is needed, and otherwise raises :class:`ToolchainError` naming
the driver's CUDA version, the toolchain's and the fix. ``gunpy info`` prints
all of it.

The resource side (registers, spills, local and shared memory per kernel, and
the largest block each kernel can run) is :func:`resources`, read from the
linker's verbose log; the CUDA backend checks every launch's block size
against it (:func:`max_block_threads`).
"""

import dataclasses
import functools
import re

__all__ = ["ToolchainError", "LinkPlan", "Versions", "versions", "plan", "ensure_loadable",
           "ptx_isa_of", "cap_ptx", "isa_for_cuda", "resources", "KernelResources",
           "max_block_threads", "SHARED_STATIC_LIMIT"]

#: static shared memory a kernel may declare (bytes): more needs a dynamic opt-in
SHARED_STATIC_LIMIT = 48 * 1024

#: registers per SM and the allocation unit of a warp's registers (sm_70 to sm_120)
_REGS_PER_SM = 65536
_REG_UNIT_PER_WARP = 256
_MAX_BLOCK = 1024

# PTX ISA version that each CUDA release's compiler writes and its driver accepts
# (the PTX ISA manual's release table). 13.x writes 9.x.
_ISA = {(11, 0): (7, 0), (11, 1): (7, 1), (11, 2): (7, 2), (11, 3): (7, 3), (11, 4): (7, 4),
        (11, 5): (7, 5), (11, 6): (7, 6), (11, 7): (7, 7), (11, 8): (7, 8),
        (12, 0): (8, 0), (12, 1): (8, 1), (12, 2): (8, 2), (12, 3): (8, 3), (12, 4): (8, 4),
        (12, 5): (8, 5), (12, 6): (8, 5), (12, 8): (8, 7), (12, 9): (8, 8)}


class ToolchainError(RuntimeError):
    """gunpy's kernels cannot be loaded (or launched) with this driver and toolchain."""


def isa_for_cuda(version):
    """The PTX ISA ``(major, minor)`` that CUDA release ``version`` writes and accepts."""
    version = tuple(version[:2])
    if version in _ISA:
        return _ISA[version]
    major, minor = version
    if major >= 13:
        return (major - 4, minor)          # 13.0 -> 9.0, 13.5 -> 9.5
    older = [v for v in _ISA if v <= version]
    return _ISA[max(older)] if older else (7, 0)


_VERSION_LINE = re.compile(rb"^\s*\.version\s+(\d+)\.(\d+)", re.M)


def ptx_isa_of(ptx):
    """The ISA version a PTX text declares (``.version 9.5`` -> ``(9, 5)``)."""
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    m = _VERSION_LINE.search(data)
    if m is None:
        raise ValueError("not PTX: no .version line")
    return int(m.group(1)), int(m.group(2))


def cap_ptx(ptx, isa):
    """``ptx`` with its ``.version`` lowered to ``isa`` if it is newer (same type as given)."""
    as_str = isinstance(ptx, str)
    data = ptx.encode() if as_str else bytes(ptx)
    if ptx_isa_of(data) > tuple(isa):
        data = _VERSION_LINE.sub(f".version {isa[0]}.{isa[1]}".encode(), data, count=1)
    return data.decode() if as_str else data


# ----------------------------------------------------------------------------- versions
@dataclasses.dataclass(frozen=True)
class Versions:
    """What the machine has. ``None``: not there (no driver, no nvJitLink...)."""
    driver: tuple = None        # CUDA version the driver supports, e.g. (13, 0)
    nvvm: str = None            # NVVM's release (the nvidia-nvvm wheel), e.g. "13.5.37"
    ptx_isa: tuple = None       # the PTX ISA NVVM writes, e.g. (9, 5)
    nvjitlink: tuple = None     # e.g. (13, 5)
    runtime: tuple = None       # the CUDA runtime library, e.g. (13, 5)
    core_linker: str = None     # what cuda.core's Linker will use: "nvjitlink" / "driver"


def _split(code):
    return int(code) // 1000, (int(code) % 1000) // 10


def _driver_version():
    try:
        from numba import cuda
        if not cuda.is_available():
            return None
        from numba.cuda.cudadrv.driver import driver
        return tuple(driver.get_version())
    except Exception:
        return None


def _nvjitlink_version():
    try:
        from cuda.bindings import nvjitlink
        return tuple(nvjitlink.version())
    except Exception:
        return None


def _runtime_version():
    try:
        from cuda.bindings import runtime
        err, code = runtime.cudaRuntimeGetVersion()
        return _split(code) if int(err) == 0 else None
    except Exception:
        return None


def _nvvm_release():
    from importlib.metadata import PackageNotFoundError, version
    for dist in ("nvidia-nvvm", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


@functools.lru_cache(maxsize=None)
def _written_isa():
    """Compile one empty kernel and read its ``.version`` (no driver needed, ~1 s)."""
    from numba import cuda

    def probe(a):
        a[0] = 1
    from numba import types
    ptx, _ = cuda.compile_ptx(probe, (types.int32[:],), cc=(9, 0))
    return ptx_isa_of(ptx)


def _core_linker():
    try:
        from cuda.core import _linker
        return "driver" if _linker._decide_nvjitlink_or_driver() else "nvjitlink"
    except Exception:
        return None


def versions(*, read_ptx=True):
    """Read every version (``read_ptx=False`` skips compiling the ISA probe)."""
    import numba
    if numba.config.ENABLE_CUDASIM:
        return Versions()
    isa = None
    nvvm = _nvvm_release()
    if read_ptx:
        try:
            isa = _written_isa()
        except Exception:
            isa = None
    if isa is None and nvvm:
        isa = isa_for_cuda(tuple(int(x) for x in nvvm.split(".")[:2]))
    return Versions(driver=_driver_version(), nvvm=nvvm, ptx_isa=isa,
                    nvjitlink=_nvjitlink_version(), runtime=_runtime_version(),
                    core_linker=_core_linker())


# ----------------------------------------------------------------------------- the plan
@dataclasses.dataclass(frozen=True)
class LinkPlan:
    """How kernels reach the device: ``path`` is ``"nvjitlink"`` or ``"driver"``;
    ``cap`` the ISA the PTX is lowered to (driver path only), or ``None``."""
    path: str
    cap: tuple = None

    def describe(self):
        if self.path == "nvjitlink":
            return "nvJitLink builds a cubin for the device (no PTX reaches the driver)"
        if self.cap:
            return (f"the driver JIT-compiles the PTX, its .version capped to "
                    f"{self.cap[0]}.{self.cap[1]} (the driver's ISA)")
        return "the driver JIT-compiles the PTX"


def _v(t):
    return "?" if t is None else ".".join(str(x) for x in t)


def _fix(driver):
    if driver[0] >= 13:
        return "pip install 'gunpy[cu13]' (brings nvJitLink 13)"
    return (f"for this CUDA {driver[0]} driver use the CUDA {driver[0]} toolchain: "
            f"pip uninstall the cu13 wheels and pip install 'gunpy[cu12]'"
            if driver[0] == 12 else "update the NVIDIA driver to R580 or newer")


def plan(v):
    """The link path for :class:`Versions` ``v``, or :class:`ToolchainError` if none works.

    With no driver (compile-only machines) the plan is what a launch would use
    where the driver is new enough.
    """
    if v.nvjitlink is not None:
        if v.driver is None or v.nvjitlink[0] <= v.driver[0]:
            return LinkPlan("nvjitlink")
        raise ToolchainError(
            f"gunpy's kernels cannot load: the driver supports CUDA {_v(v.driver)}, but the "
            f"toolchain is CUDA {_v(v.nvjitlink)} (nvJitLink {_v(v.nvjitlink)}, NVVM {v.nvvm or '?'} "
            f"writing PTX ISA {_v(v.ptx_isa)}), whose cubins need a CUDA {v.nvjitlink[0]} driver. "
            f"Fix: {_fix(v.driver)}, or update the NVIDIA driver.")
    if v.driver is None or v.ptx_isa is None:
        return LinkPlan("driver")
    accepted = isa_for_cuda(v.driver)
    if v.ptx_isa <= accepted:
        return LinkPlan("driver")
    if v.ptx_isa[0] == accepted[0]:
        return LinkPlan("driver", cap=accepted)
    raise ToolchainError(
        f"gunpy's kernels cannot load: the driver supports CUDA {_v(v.driver)} (PTX ISA up to "
        f"{_v(accepted)}), NVVM {v.nvvm or '?'} writes PTX ISA {_v(v.ptx_isa)}, and nvJitLink is "
        f"not installed. Fix: {_fix(v.driver)}.")


_installed_cap = None


def _install_ptx_cap(isa):
    """Lower the ``.version`` of every PTX numba-cuda hands its linker to ``isa``."""
    global _installed_cap
    from numba.cuda.cudadrv import driver
    linker = getattr(driver, "_Linker", None)
    if linker is None or not hasattr(linker, "add_ptx"):
        from importlib.metadata import version
        raise ToolchainError(
            f"this driver needs gunpy's PTX capped to ISA {isa[0]}.{isa[1]}, but numba-cuda "
            f"{version('numba-cuda')} has no linker gunpy knows how to hand capped PTX to "
            f"(gunpy is tested with numba-cuda 0.30). Fix: install nvJitLink "
            f"(pip install 'gunpy[cu13]'), which hands the driver a cubin instead")
    if _installed_cap is None:
        original = linker.add_ptx

        def add_ptx(self, ptx, name="<cudapy-ptx>"):
            return original(self, cap_ptx(ptx, _installed_cap), name)
        add_ptx.__wrapped__ = original
        linker.add_ptx = add_ptx
    _installed_cap = tuple(isa)


@functools.lru_cache(maxsize=None)
def ensure_loadable():
    """Check (once a process) that kernels will load on this GPU; return the :class:`LinkPlan`.

    Raises :class:`ToolchainError` before any launch where no path works, or
    where ``cuda.core`` would link by another path than the plan.
    """
    v = versions(read_ptx=_nvjitlink_version() is None)
    p = plan(v)
    if v.core_linker is not None and v.core_linker != p.path:
        raise ToolchainError(
            f"cuda.core would link gunpy's kernels with the {v.core_linker} linker, but nvJitLink "
            f"{'is' if v.nvjitlink else 'is not'} loadable here (versions: driver CUDA "
            f"{_v(v.driver)}, nvJitLink {_v(v.nvjitlink)}, NVVM {v.nvvm or '?'}); reinstall the "
            f"toolchain wheels: pip install --force-reinstall 'gunpy[cu13]'")
    if p.cap:
        _install_ptx_cap(p.cap)
    return p


# ----------------------------------------------------------------------------- resources
@dataclasses.dataclass(frozen=True)
class KernelResources:
    """What one kernel takes on the device, from the linker's (or ptxas's) verbose log."""
    registers: int
    spill_stores: int = 0
    spill_loads: int = 0
    stack: int = 0              # local memory per thread (bytes)
    shared: int = 0             # static shared memory per block (bytes)
    max_threads: int = _MAX_BLOCK  # the largest block it can launch (registers, launch bounds)

    @property
    def spills(self):
        return self.spill_stores + self.spill_loads


def max_block_threads(registers, *, bound=None):
    """The largest block (threads) a kernel using ``registers`` per thread can launch."""
    if registers <= 0:
        warps = _MAX_BLOCK // 32
    else:
        per_warp = -(-registers * 32 // _REG_UNIT_PER_WARP) * _REG_UNIT_PER_WARP
        warps = _REGS_PER_SM // per_warp
    threads = min(_MAX_BLOCK, warps * 32)
    return min(threads, bound) if bound else threads


def resources(log, *, bound=None):
    """``{entry name: KernelResources}`` from an nvJitLink / ptxas ``-v`` log."""
    out, cur, acc = {}, None, {}

    def close():
        if cur is not None and "registers" in acc:
            out[cur] = KernelResources(
                registers=acc["registers"], spill_stores=acc.get("spill_stores", 0),
                spill_loads=acc.get("spill_loads", 0), stack=acc.get("stack", 0),
                shared=acc.get("shared", 0),
                max_threads=max_block_threads(acc["registers"], bound=bound))

    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            close()
            cur, acc = m.group(1), {}
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and cur is not None:
            acc["stack"] = max(acc.get("stack", 0), int(m.group(1)))
            acc["spill_stores"] = max(acc.get("spill_stores", 0), int(m.group(2)))
            acc["spill_loads"] = max(acc.get("spill_loads", 0), int(m.group(3)))
        if cur is None:
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            acc["registers"] = int(m.group(1))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            acc["shared"] = max(acc.get("shared", 0), int(m.group(1)))
    close()
    return out


def link_cubin(ptx, cc=(9, 0)):
    """Link ``ptx`` into a cubin for ``cc`` the way a launch does, with no driver.

    The path is numba-cuda's own linker object (``cuda.core``'s ``Linker``,
    nvJitLink where it loads), asked for its verbose log. Returns ``(cubin bytes,
    {entry: KernelResources}, log)``; raises :class:`ToolchainError` where the
    link fails.
    """
    import dataclasses as dc

    from numba.cuda.cudadrv import driver

    class _Verbose(driver._Linker):
        def _get_linker_options(self, ptx):
            return dc.replace(super()._get_linker_options(ptx), verbose=True)

    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    lk = _Verbose(cc=tuple(cc))
    lk.add_ptx(data)
    try:
        obj = lk.complete()
    except Exception as exc:
        raise ToolchainError(f"linking a kernel for sm_{cc[0]}{cc[1]} failed: {exc}") from exc
    log = lk.info_log or ""
    return bytes(obj.code), resources(log), log


def assemble(ptx, ptxas, arch="sm_90"):
    """Assemble ``ptx`` with the ``ptxas`` executable at that path; ``({entry: KernelResources}, log)``.

    Raises :class:`ToolchainError` with ptxas's message when it refuses the PTX.
    """
    import os
    import subprocess
    import tempfile
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "wb") as f:
            f.write(data)
        r = subprocess.run([ptxas, f"-arch={arch}", "-v", src, "-o", os.path.join(tmp, "k.cubin")],
                           capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        raise ToolchainError(f"ptxas ({ptxas}) refused the PTX: {log.strip()}")
    return resources(log), log
