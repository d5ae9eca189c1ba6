"""Graph primitives built on gunpy's operators (installed as ``gunpy.primitives``).

Each module is one primitive and registers one :class:`gunpy.registry.Primitive`
entry at its end. Importing this package loads none of them: ``gunpy.bfs`` or
:func:`gunpy.registry.primitive` imports the one asked for, and
:func:`gunpy.registry.primitives` all of them (:data:`gunpy.registry.BUILTIN`).
"""
