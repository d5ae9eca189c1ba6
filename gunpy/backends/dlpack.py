"""DLPack, both ways: device tensors read in place, and device arrays handed out.

:func:`from_dlpack` reads a producer's capsule (``obj.__dlpack__()``: PyTorch, JAX,
CuPy, anything in the array API standard) into an object with
``__cuda_array_interface__`` over the same memory, so :func:`gunpy.backends.interop.
device_view` takes it like any other device array. The capsule is marked used and the
producer's deleter runs when that object (and every view of it) is dropped.

:class:`DLPackArray` is the other way: a numba device array (a result left on the
GPU) as a DLPack producer, so ``torch.from_dlpack``, ``cupy.from_dlpack`` and
``jax.dlpack.from_dlpack`` take it with no copy. The capsule holds the array alive
until the consumer's deleter call.

The structures follow ``dlpack.h`` (the unversioned ``DLManagedTensor`` and the 1.x
``DLManagedTensorVersioned``); pointers are read with ``ctypes`` and nothing is
trusted: a device that is not CUDA, a type with lanes or an odd bit width is refused
with what it was.
"""

import ctypes
import itertools

import numpy as np

__all__ = ["from_dlpack", "DLPackArray", "CUDA", "CUDA_MANAGED"]

#: DLPack's device types for memory a CUDA kernel reads (``kDLCUDA``, ``kDLCUDAManaged``)
CUDA, CUDA_MANAGED = 2, 13
#: ``__dlpack__``'s stream for CUDA's legacy default stream, the one gunpy's backend
#: (and numba's default stream) runs on: the producer orders its writes before it
_LEGACY_STREAM = 1
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}  # kDLInt, kDLUInt, kDLFloat, ...
_CODES = {v: k for k, v in _KINDS.items()}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter)]


class _Versioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]


def _api(name, restype, argtypes):
    f = ctypes.pythonapi[name]  # a new function object each time: argtypes of its own
    f.restype, f.argtypes = restype, argtypes
    return f


# capsule names live as long as the module (a capsule keeps the pointer, not a copy)
_NAME, _NAME_V, _USED, _USED_V = b"dltensor", b"dltensor_versioned", b"used_dltensor", \
    b"used_dltensor_versioned"
_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, [ctypes.py_object, ctypes.c_char_p])
_is_valid_raw = _api("PyCapsule_IsValid", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p])
_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p,
                    [ctypes.py_object, ctypes.c_char_p])
_get_pointer_raw = _api("PyCapsule_GetPointer", ctypes.c_void_p,
                        [ctypes.c_void_p, ctypes.c_char_p])
_set_name = _api("PyCapsule_SetName", ctypes.c_int, [ctypes.py_object, ctypes.c_char_p])
_new_capsule = _api("PyCapsule_New", ctypes.py_object,
                    [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p])


def _device_words(device_type, device_id):
    from gunpy._inputs import _DLPACK_DEVICES
    return (f"{_DLPACK_DEVICES.get(device_type, f'DLPack device type {device_type}')} "
            f"memory (device {device_id})")


class _Imported:
    """A producer's tensor, read in place: ``__cuda_array_interface__`` over its memory.
    Runs the producer's deleter when dropped (views of it keep it alive)."""

    def __init__(self, name, obj):
        try:
            capsule = obj.__dlpack__(stream=_LEGACY_STREAM)
        except TypeError:  # a producer older than the stream keyword
            capsule = obj.__dlpack__()
        versioned = bool(_is_valid(capsule, _NAME_V))
        if not versioned and not _is_valid(capsule, _NAME):
            raise ValueError(f"{name}.__dlpack__() gave no DLPack capsule (or a used one)")
        address = _get_pointer(capsule, _NAME_V if versioned else _NAME)
        managed = (_Versioned if versioned else _Managed).from_address(address)
        if versioned and managed.major != 1:
            raise ValueError(f"{name} speaks DLPack {managed.major}.{managed.minor}; gunpy "
                             "reads 0.x and 1.x")
        t = managed.dl_tensor
        where = (t.device.device_type, t.device.device_id)
        if where[0] not in (CUDA, CUDA_MANAGED):
            raise ValueError(f"{name} is in {_device_words(*where)}; gunpy reads device "
                             "arrays from CUDA memory")
        self.device_id = where[1]
        bits, kind = t.dtype.bits, _KINDS.get(t.dtype.code)
        if kind is None or t.dtype.lanes != 1 or bits % 8 or not bits:
            raise ValueError(f"{name} has a DLPack type gunpy cannot read (code "
                             f"{t.dtype.code}, {bits} bits, {t.dtype.lanes} lanes)")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        itemsize = bits // 8
        strides = None if not t.strides else tuple(t.strides[i] * itemsize
                                                   for i in range(t.ndim))
        data = (t.data or 0) + t.byte_offset
        self.__cuda_array_interface__ = {
            "shape": shape, "strides": strides, "version": 3,
            "typestr": "|b1" if kind == "b" else f"<{kind}{itemsize}",
            "data": (data if any(shape) or not shape else 0, False)}
        _set_name(capsule, _USED_V if versioned else _USED)  # ours to free now
        self._managed = managed

    def __del__(self):
        managed = getattr(self, "_managed", None)
        if managed is not None and managed.deleter:
            self._managed = None
            managed.deleter(ctypes.addressof(managed))


def from_dlpack(name, obj):
    """``obj`` (a DLPack producer in CUDA memory) as an object with
    ``__cuda_array_interface__`` over the same memory, no copy; ``name`` is the
    argument's name for errors."""
    return _Imported(name, obj)


# Exported tensors: the struct, its shape and strides and the array they describe,
# kept here until the consumer calls the deleter (or the capsule dies unused).
_LIVE = {}
_ids = itertools.count()


@_Deleter
def _release(address):
    _LIVE.pop(address, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_died(capsule):
    # a capsule nobody consumed still owns its tensor (a consumed one is renamed)
    if _is_valid_raw(capsule, _NAME):
        _release(_get_pointer_raw(capsule, _NAME))


def _layout(array):
    """(pointer, shape, strides in bytes) of a numba device array, real or simulated."""
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is None:  # the simulator's device array: host memory behind it
        cai = array._ary.__array_interface__
    strides = cai.get("strides") or None
    return cai["data"][0], tuple(cai["shape"]), strides


class DLPackArray:
    """A numba device array as a DLPack producer (``__dlpack__``, ``__dlpack_device__``)
    and with ``__cuda_array_interface__``: what ``torch.from_dlpack``,
    ``cupy.from_dlpack`` and ``jax.dlpack.from_dlpack`` take, with no copy.

    The array stays alive while any consumer holds the memory.
    """

    def __init__(self, array):
        self.array = array
        self.dtype = np.dtype(array.dtype)
        if self.dtype.kind not in _CODES:
            raise TypeError(f"no DLPack type for {self.dtype}")

    @property
    def shape(self):
        return tuple(self.array.shape)

    @property
    def __cuda_array_interface__(self):
        return self.array.__cuda_array_interface__

    def __dlpack_device__(self):
        from gunpy.backends.cuda import ON_CUDASIM
        if ON_CUDASIM:
            return CUDA, 0
        from numba import cuda
        return CUDA, cuda.get_current_device().id

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A ``dltensor`` capsule over the array (the unversioned layout, which every
        consumer reads). ``stream``: the consumer's; kernels that wrote the array ran on
        the legacy default stream, and other streams are made to wait for them."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the array is in {_device_words(*self.__dlpack_device__())}"
                              f", not {_device_words(*dl_device)}")
        array = self.array
        if copy:
            array = _device_copy(array)
        _wait(stream)
        pointer, shape, strides = _layout(array)
        ndim, itemsize = len(shape), self.dtype.itemsize
        dims = (ctypes.c_int64 * max(ndim, 1))(*shape)
        steps = None if strides is None else (ctypes.c_int64 * max(ndim, 1))(
            *(s // itemsize for s in strides))
        managed = _Managed()
        t = managed.dl_tensor
        t.data, t.ndim, t.byte_offset = pointer, ndim, 0
        t.device = _Device(*self.__dlpack_device__())
        t.dtype = _DataType(_CODES[self.dtype.kind], itemsize * 8, 1)
        t.shape = dims
        t.strides = steps if steps is not None else ctypes.POINTER(ctypes.c_int64)()
        managed.manager_ctx = next(_ids)
        managed.deleter = _release
        address = ctypes.addressof(managed)
        _LIVE[address] = (managed, dims, steps, array)
        return _new_capsule(address, _NAME, ctypes.cast(_capsule_died, ctypes.c_void_p))

    def __repr__(self):
        return f"DLPackArray({self.dtype}[{', '.join(map(str, self.shape))}])"


def _device_copy(array):
    from numba import cuda
    out = cuda.device_array(array.shape, array.dtype)
    out.copy_to_device(array)
    return out


def _wait(stream):
    """Make the consumer's ``stream`` wait for the work queued on the legacy default
    stream (nothing to do for that stream itself, or for -1: "no synchronisation")."""
    from gunpy.backends.cuda import ON_CUDASIM
    if ON_CUDASIM or stream in (None, -1, _LEGACY_STREAM):
        return
    from numba import cuda
    if not isinstance(stream, int) or stream == 0:
        raise ValueError(f"stream must be a CUDA stream handle, got {stream!r}")
    event = cuda.event(timing=False)
    event.record(cuda.default_stream())
    event.wait(cuda.external_stream(stream))
