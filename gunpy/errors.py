"""Exceptions raised by gunpy."""

__all__ = ["GraphFormatError", "INVALID"]

#: Marker for "no vertex" (unreached depth, missing parent), as in Gunrock.
INVALID = -1

#: Most characters of a file an error message quotes (``quote``).
QUOTE_LIMIT = 100


def quote(text, limit=QUOTE_LIMIT):
    """``repr`` of at most ``limit`` characters of ``text`` (bytes or str), marked when cut."""
    size = len(text)
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text[:limit + 1]).decode("ascii", "backslashreplace")
    if size <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({size:,} characters)"


class GraphFormatError(ValueError):
    """A graph file is malformed; the message names the file, the line and the column.

    ``path``, ``line`` (1-based) and ``column`` (1-based, in bytes) are kept as
    attributes (``None`` where they do not apply). The message is one line and
    quotes at most :data:`QUOTE_LIMIT` characters of the file.
    """

    def __init__(self, message, *, path=None, line=None, column=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
                if column is not None:
                    where += f", column {column}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line
        self.column = column
