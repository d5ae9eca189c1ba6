"""How a gunpy.blas operation runs: the :class:`Descriptor` and the ``options`` block.

A descriptor never changes what an operation computes, only how (push or
pull, the load balance, early exit...). Each operation takes its options as
keywords (``w(mask, direction="pull") << expr``, ``expr.new(direction="push")``);
:func:`options` sets the defaults for a ``with`` block.
"""

import contextlib
import threading
from dataclasses import dataclass, fields, replace

__all__ = ["Descriptor", "options", "current", "resolve"]


@dataclass(frozen=True)
class Descriptor:
    """How an operation runs (never what it computes).

    ``direction``: ``"push"`` (advance over the input's entries), ``"pull"``
    (each output row reduces its in-edges) or ``"auto"``: pull when the input
    holds more than ``ratio`` of the vertices (the push-pull paper's rule,
    section 6.3). ``load_balance``: push's workload mapping (any of
    :func:`gunpy.operators.advance.load_balance_options`). ``early_exit``: a
    pull row stops at the monoid's terminal value. ``structure_only``: ignore
    the matrix's values when the multiply does not read them (``"auto"``) or
    always (True). ``operand_reuse``: pull tests the (complemented) mask
    itself as the input set; the caller promises that every masked in-neighbour
    of an unmasked row is in the input (true of BFS's frontier and visited set).
    ``pull_mapping``: see :class:`gunpy.direction.DirectionPolicy`.
    """

    direction: str = "auto"
    load_balance: str = "auto"
    early_exit: bool = True
    structure_only: object = "auto"
    operand_reuse: bool = False
    ratio: float = 0.01
    pull_mapping: str = "auto"

    def __post_init__(self):
        if self.direction not in ("push", "pull", "auto"):
            raise ValueError(f"unknown direction {self.direction!r}; valid: 'push', 'pull', "
                             "'auto'")
        from gunpy.operators.advance import check_load_balance, pull_mapping_options
        check_load_balance(self.load_balance)
        if self.pull_mapping not in pull_mapping_options():
            raise ValueError(f"unknown pull mapping {self.pull_mapping!r}; valid: "
                             f"{pull_mapping_options()}")
        if self.structure_only not in ("auto", True, False):
            raise ValueError("structure_only must be 'auto', True or False")
        if not self.ratio > 0:
            raise ValueError("ratio must be positive")


_OPTION_NAMES = {f.name for f in fields(Descriptor)}
_DEFAULT = Descriptor()
_local = threading.local()   # the options block in force, per thread
_MEMO = {}


def current():
    """The descriptor in force: the innermost :func:`options` block's, else the default."""
    return getattr(_local, "desc", None) or _DEFAULT


@contextlib.contextmanager
def options(**opts):
    """Default descriptor options for the operations in the ``with`` block.

    >>> from gunpy import blas
    >>> with blas.options(direction="push"):
    ...     pass
    """
    saved = current()
    _local.desc = resolve(opts, saved)
    try:
        yield _local.desc
    finally:
        _local.desc = saved


def resolve(opts, base=None):
    """``base`` (default: :func:`current`) with the options ``opts`` changed; unknown names
    raise ``TypeError``. Memoised: a loop passing the same options builds one descriptor."""
    base = base or current()
    if not opts:
        return base
    try:
        key = (base, tuple(sorted(opts.items())))
        hit = _MEMO.get(key)
    except TypeError:   # an unhashable option value: checked (and refused) below
        key, hit = None, None
    if hit is not None:
        return hit
    unknown = set(opts) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown gunpy.blas option(s) {sorted(unknown)}; valid: "
                        f"{sorted(_OPTION_NAMES)}")
    desc = replace(base, **opts)
    if key is not None and len(_MEMO) < 4096:
        _MEMO[key] = desc
    return desc
