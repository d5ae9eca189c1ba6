"""Graph primitives built on gunpy's operators (installed as ``gunpy.primitives``)."""
