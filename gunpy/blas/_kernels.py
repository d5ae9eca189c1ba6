"""The functors behind gunpy.blas: each GraphBLAS operation is one or two operator calls.

Every function here builds (once per backend and specialisation) a
:class:`gunpy.Functor` whose hooks call the ops' compiled functions, and runs
it through gunpy's own operators: ``advance`` (push vxm/mxv), pull
``advance`` (masked mxv with early exit), ``intersect`` (masked mxm),
``compute`` and ``filter`` (element-wise work). No raw kernels: the same
source runs on the CPU, on CUDA and under the simulator.
"""

import collections

import numpy as np

from gunpy import atomics
from gunpy.functor import Functor

__all__ = ["jit", "caster", "product_functor", "harvest_functor", "assign_functor",
           "scatter_functor", "value_bits_functor", "ewise_add_functor", "ewise_mult_functor",
           "apply_functor", "select_functor", "dense_functor", "mxm_functor"]

_JIT = {}
_FUNCTORS = {}


def jit(backend, fn):
    """``fn`` compiled as a device function of ``backend`` (cached), with IEEE arithmetic
    (``x / 0`` is inf on every backend)."""
    key = (backend, fn)
    f = _JIT.get(key)
    if f is None:
        f = _JIT[key] = backend.value_function(fn)
    return f


def _cached(key, build):
    f = _FUNCTORS.get(key)
    if f is None:
        f = _FUNCTORS[key] = build()
    return f


_CASTS = {}


def _cast_source(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        def cast(x):
            return x != 0
    else:
        typ = dt.type

        def cast(x):
            return typ(x)
    return cast


def caster(backend, dtype):
    """A device function converting a value to ``dtype`` (bool: ``x != 0``)."""
    dt = np.dtype(dtype)
    fn = _CASTS.get(dt)
    if fn is None:
        fn = _CASTS[dt] = _cast_source(dt)
    return jit(backend, fn)


def _typed(backend, fn, in_dt, out_dt):
    """``(f, cin, cout)``: ``fn`` compiled, and the casts to its operand and result types."""
    return jit(backend, fn), caster(backend, in_dt), caster(backend, out_dt)


def _bit(words, v):
    return (words[v >> 5] >> np.uint32(v & 31)) & np.uint32(1)


def _set_bit(words, v):
    """Set ``v``'s bit; True when this call set it (it was clear)."""
    bit = np.uint32(1) << np.uint32(v & 31)
    return (atomics.or_(words, v >> 5, bit) & bit) == 0


def _combiner(backend, atomic, monoid_fn):
    """``combine(out, i, z)``: fold ``z`` into ``out[i]`` with the monoid."""
    plain = jit(backend, monoid_fn)
    # plain booleans: device code cannot compare strings
    k_add, k_min, k_max = atomic == "add", atomic == "min", atomic == "max"
    k_lor, k_land = atomic == "lor", atomic == "land"

    def combine(out, i, z):
        if k_add:
            atomics.add(out, i, z)
        elif k_min:
            atomics.min(out, i, z)
        elif k_max:
            atomics.max(out, i, z)
        elif k_lor:
            if z:
                out[i] = True
        elif k_land:
            if not z:
                out[i] = False
        else:
            # one writer per row (pull, thread mapping): no atomic needed
            out[i] = plain(out[i], z)

    return jit(backend, combine)


def _helpers(backend):
    return jit(backend, _bit), jit(backend, _set_bit)


ProductData = collections.namedtuple("ProductData", "x out seen terminal")


def product_functor(backend, mul_fn, position, matrix_first, in_dt, out_dt, combine_kind,
                    monoid_fn, pull, terminal_mode, reads_x, reads_a, transposed):
    """The functor of one vxm / mxv step (see :func:`gunpy.blas.expr.product`).

    Push (``pull=False``): each edge ``src -> dst`` of the pushed graph computes
    its product and folds it into ``out[dst]``; the first edge to reach ``dst``
    (an atomic test-and-set in ``seen``, which starts as the mask) is the one
    that emits it, so the output queue has no duplicates. Pull: each row
    outside the mask folds its in-edges' products; with ``terminal_mode``
    ``"any"`` the first product ends the row's scan (early exit),
    ``"value"``: the scan ends when the row reaches the monoid's terminal
    value, and ``seen`` records every row that got a product.
    """
    key = ("product", backend, mul_fn, position, matrix_first, np.dtype(in_dt).str,
           np.dtype(out_dt).str, combine_kind, monoid_fn, pull, terminal_mode, reads_x,
           reads_a, transposed)

    def build():
        bit, set_bit = _helpers(backend)
        mul, cin, cout = _typed(backend, mul_fn, in_dt, out_dt)
        combine = _combiner(backend, combine_kind, monoid_fn)
        is_any = combine_kind == "any"
        positional = position is not None
        side, ij, off = position if positional else ("", "", 0)
        # the product's indices: vxm (u @ A) walks A's edges k -> j, mxv (A @ u) walks
        # A.T's edges k -> i; "k" (the inner index) is always the edge's source
        from_src = (side == "first" and ij == "j") or (side == "second" and ij == "i")
        from_dst = (side == "first" and ij == "i" and transposed) or \
                   (side == "second" and ij == "j" and not transposed)
        value_mode = terminal_mode == "value"

        def product(src, dst, w, data):
            if positional:
                if from_src:
                    return cout(src + off)
                if from_dst:
                    return cout(dst + off)
                return cout(off)
            xv = cin(data.x[src]) if reads_x else cin(0)
            av = cin(w) if reads_a else cin(0)
            if matrix_first:
                return cout(mul(av, xv))
            return cout(mul(xv, av))

        product_dev = jit(backend, product)

        class ProductFunctor(Functor):
            @staticmethod
            def cond_edge(src, dst, edge, weight, data):
                z = product_dev(src, dst, weight, data)
                if not pull:
                    first = set_bit(data.seen, dst)
                    if is_any:
                        if first:
                            data.out[dst] = z
                    else:
                        combine(data.out, dst, z)
                    return first
                if is_any:
                    data.out[dst] = z
                    return True
                combine(data.out, dst, z)
                if value_mode:
                    if bit(data.seen, dst) == 0:
                        set_bit(data.seen, dst)
                    return data.out[dst] == data.terminal
                return True

        return ProductFunctor

    return _cached(key, build)


HarvestData = collections.namedtuple("HarvestData", "dst ws ident")


def harvest_functor(backend):
    """``dst[v] = ws[v]; ws[v] = identity``: move a result out of the clean workspace."""
    def build():
        class Harvest(Functor):
            @staticmethod
            def apply_vertex(v, data):
                data.dst[v] = data.ws[v]
                data.ws[v] = data.ident
        return Harvest
    return _cached(("harvest", backend), build)


AssignData = collections.namedtuple("AssignData", "w_vals w_bits t_vals t_bits allow out out_bits")


def assign_functor(backend, accum_fn, in_dt, out_dt, replace):
    """The general write rule of GraphBLAS, ``w<mask, replace> = accum(w, t)``, at one index.

    ``allow`` holds the mask's bits (complemented masks already inverted).
    """
    key = ("assign", backend, accum_fn, np.dtype(in_dt).str, np.dtype(out_dt).str, replace)

    def build():
        bit, set_bit = _helpers(backend)
        has_accum = accum_fn is not None
        acc, cin, cout = _typed(backend, accum_fn if has_accum else _first, in_dt, out_dt)

        class Assign(Functor):
            @staticmethod
            def apply_vertex(v, data):
                in_w = bit(data.w_bits, v) != 0
                in_t = bit(data.t_bits, v) != 0
                if bit(data.allow, v) != 0:
                    if in_t and in_w and has_accum:
                        data.out[v] = cout(acc(cin(data.w_vals[v]), cin(data.t_vals[v])))
                    elif in_t:
                        data.out[v] = cout(data.t_vals[v])
                    elif in_w and has_accum:
                        data.out[v] = data.w_vals[v]
                    else:
                        return
                elif in_w and not replace:
                    data.out[v] = data.w_vals[v]
                else:
                    return
                set_bit(data.out_bits, v)

        return Assign

    return _cached(key, build)


def _first(x, y):
    return x


ScatterData = collections.namedtuple("ScatterData", "src scalar dst bits")


def scatter_functor(backend, out_dt, from_scalar, dense=False):
    """``dst[v] = src[v]`` (or the scalar), converted to ``out_dt``.

    Run by ``compute`` over a mask's entries, it is ``w<m.S> = t`` (values only; the
    caller ORs the structure in word by word; ``dense``: over every index, testing m's
    ``bits``). Run by ``filter`` over t's entries, it keeps those whose bit is set in
    ``bits`` (``w`` becomes the entries of ``t`` a mask allows).
    """
    def build():
        bit, _ = _helpers(backend)
        cout = caster(backend, out_dt)

        class Scatter(Functor):
            @staticmethod
            def cond_vertex(v, data):
                return bit(data.bits, v) != 0

            @staticmethod
            def apply_vertex(v, data):
                if dense:
                    if bit(data.bits, v) == 0:
                        return
                if from_scalar:
                    data.dst[v] = cout(data.scalar)
                else:
                    data.dst[v] = cout(data.src[v])

        return Scatter

    return _cached(("scatter", backend, np.dtype(out_dt).str, from_scalar, dense), build)


BitsData = collections.namedtuple("BitsData", "vals words")


def value_bits_functor(backend):
    """The bits of the entries whose value is true (a value mask ``m.V``)."""
    def build():
        _, set_bit = _helpers(backend)

        class ValueBits(Functor):
            @staticmethod
            def apply_vertex(v, data):
                if data.vals[v] != 0:
                    set_bit(data.words, v)

        return ValueBits
    return _cached(("value_bits", backend), build)


EwiseData = collections.namedtuple("EwiseData", "a a_bits b b_bits out out_bits")


def ewise_add_functor(backend, op_fn, in_dt, out_dt):
    """Union: both present -> ``op(a, b)``, one present -> that value."""
    def build():
        bit, set_bit = _helpers(backend)
        op, cin, cout = _typed(backend, op_fn, in_dt, out_dt)

        class EwiseAdd(Functor):
            @staticmethod
            def apply_vertex(v, data):
                ina = bit(data.a_bits, v) != 0
                inb = bit(data.b_bits, v) != 0
                if ina and inb:
                    data.out[v] = cout(op(cin(data.a[v]), cin(data.b[v])))
                elif ina:
                    data.out[v] = cout(data.a[v])
                elif inb:
                    data.out[v] = cout(data.b[v])
                else:
                    return
                set_bit(data.out_bits, v)

        return EwiseAdd
    return _cached(("ewise_add", backend, op_fn, np.dtype(in_dt).str, np.dtype(out_dt).str),
                   build)


def ewise_mult_functor(backend, op_fn, in_dt, out_dt, swapped):
    """Intersection, run as a filter over the sparser operand's entries."""
    def build():
        bit, _ = _helpers(backend)
        op, cin, cout = _typed(backend, op_fn, in_dt, out_dt)

        class EwiseMult(Functor):
            @staticmethod
            def cond_vertex(v, data):
                return bit(data.b_bits, v) != 0

            @staticmethod
            def apply_vertex(v, data):
                if swapped:
                    data.out[v] = cout(op(cin(data.b[v]), cin(data.a[v])))
                else:
                    data.out[v] = cout(op(cin(data.a[v]), cin(data.b[v])))

        return EwiseMult
    return _cached(("ewise_mult", backend, op_fn, np.dtype(in_dt).str, np.dtype(out_dt).str,
                    swapped), build)


ApplyData = collections.namedtuple("ApplyData", "x scalar out")


def apply_functor(backend, fn, in_dt, out_dt, bind):
    """``out[v] = f(x[v])`` (``bind``: "left" ``f(s, x)``, "right" ``f(x, s)``, or None)."""
    def build():
        f, cin, cout = _typed(backend, fn, in_dt, out_dt)
        left, right = bind == "left", bind == "right"

        class Apply(Functor):
            @staticmethod
            def apply_vertex(v, data):
                x = cin(data.x[v])
                if left:
                    data.out[v] = cout(f(cin(data.scalar), x))
                elif right:
                    data.out[v] = cout(f(x, cin(data.scalar)))
                else:
                    data.out[v] = cout(f(x))

        return Apply
    return _cached(("apply", backend, fn, np.dtype(in_dt).str, np.dtype(out_dt).str, bind),
                   build)


SelectData = collections.namedtuple("SelectData", "x thunk out")


def select_functor(backend, fn):
    """Keep the entries where ``f(x, index, thunk)`` holds (a filter over the entries)."""
    def build():
        f = jit(backend, fn)

        class Select(Functor):
            @staticmethod
            def cond_vertex(v, data):
                return f(data.x[v], v, data.thunk)

            @staticmethod
            def apply_vertex(v, data):
                data.out[v] = data.x[v]

        return Select
    return _cached(("select", backend, fn), build)


DenseData = collections.namedtuple("DenseData", "x bits fill out")


def dense_functor(backend, out_dt):
    """``out[v] = x[v]`` where present, else ``fill`` (a reduction's input)."""
    def build():
        bit, _ = _helpers(backend)
        cout = caster(backend, out_dt)

        class Dense(Functor):
            @staticmethod
            def apply_vertex(v, data):
                if bit(data.bits, v) != 0:
                    data.out[v] = cout(data.x[v])
                else:
                    data.out[v] = data.fill
        return Dense
    return _cached(("dense", backend, np.dtype(out_dt).str), build)


MxmData = collections.namedtuple("MxmData", "a_vals b_vals out hit")


def mxm_functor(backend, mul_fn, position, monoid_fn, in_dt, out_dt, a_weighted, b_weighted):
    """Masked mxm ``C<M> = A (+.*) B`` for :func:`gunpy.operators.intersect`: the mask's
    edge ``e = (i, j)`` folds ``A(i, k) * B(k, j)`` over the common ``k`` (one writer per e)."""
    key = ("mxm", backend, mul_fn, position, monoid_fn, np.dtype(in_dt).str,
           np.dtype(out_dt).str, a_weighted, b_weighted)

    def build():
        mul, cin, cout = _typed(backend, mul_fn, in_dt, out_dt)
        plus = jit(backend, monoid_fn)
        positional = position is not None
        side, ij, off = position if positional else ("", "", 0)
        # C(i, j) = A(i, k) * B(k, j): firsti = i, firstj = secondi = k, secondj = j
        from_i = side == "first" and ij == "i"
        from_j = side == "second" and ij == "j"

        class Mxm(Functor):
            @staticmethod
            def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
                if positional:
                    if from_i:
                        z = cout(src + off)
                    elif from_j:
                        z = cout(dst + off)
                    else:
                        z = cout(common + off)
                else:
                    a = cin(data.a_vals[src_edge]) if a_weighted else cin(1)
                    b = cin(data.b_vals[dst_edge]) if b_weighted else cin(1)
                    z = cout(mul(a, b))
                # a select, not a branch: whether an entry has a term yet is a coin toss
                # the CPU mispredicts (RMAT-12's A @ A: 166 -> 45 ms for the terms)
                first = data.hit[edge] == 0
                # cout: ``out`` may be float64 storage for an integer result (Gustavson's
                # values go straight to the matrix's float64 values, no copy)
                folded = cout(plus(cout(data.out[edge]), z))
                data.out[edge] = z if first else folded
                data.hit[edge] = 1

        return Mxm
    return _cached(key, build)
