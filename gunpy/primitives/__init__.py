"""Graph primitives built on gunpy's operators (installed as ``gunpy.primitives``).

Each module is one primitive and registers one :class:`gunpy.registry.Primitive`
entry at its end. Importing this package loads none of them: ``gunpy.bfs`` or
:func:`gunpy.registry.primitive` imports the one asked for, and
:func:`gunpy.registry.primitives` all of them (:data:`gunpy.registry.BUILTIN`).
"""

import importlib as _importlib
import importlib.util as _util


def __getattr__(name):
    """``gunpy.primitives.bfs`` and the like: the module, imported on first use."""
    if not name.startswith("_") and _util.find_spec(f"{__name__}.{name}") is not None:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
