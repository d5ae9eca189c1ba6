"""Exceptions raised by gunpy."""

__all__ = ["GraphFormatError", "INVALID"]

#: Marker for "no vertex" (unreached depth, missing parent), as in Gunrock.
INVALID = -1


class GraphFormatError(ValueError):
    """A graph file is malformed; the message names the file and the line."""

    def __init__(self, message, *, path=None, line=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line
