"""Progress bars for long work: on a terminal when asked, silent otherwise.

Every long operation in gunpy (graph generation and reading, kernel
compilation, all-sources betweenness, Louvain, PageRank's iterations, the
benchmark suite) takes ``progress=``:

* ``False`` (the Python API's default): nothing is shown;
* ``True``: a bar on standard error (tqdm), wherever it goes;
* ``None`` (the command line's default): a bar only when standard error is a
  terminal, so logs and pipes stay clean (``gunpy run -q`` passes ``False``).

>>> from gunpy.progress import bar
>>> with bar(3, "levels", enabled=False) as b:
...     for _ in range(3):
...         b.update()
>>> b.n
3
"""

import sys

__all__ = ["bar", "status", "wanted"]


def wanted(enabled):
    """Whether ``progress=enabled`` shows a bar (``None``: only on a terminal)."""
    if enabled is None:
        stream = sys.stderr
        return bool(getattr(stream, "isatty", lambda: False)())
    return bool(enabled)


class _Silent:
    """A bar that shows nothing (and costs a counter)."""

    def __init__(self, total=None):
        self.total, self.n = total, 0

    def update(self, k=1):
        self.n += k

    def set_postfix_str(self, text):
        pass

    def set_description_str(self, text):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def bar(total=None, desc="", *, unit="it", enabled=False, leave=False):
    """A context-managed progress bar (``total=None``: a count with no end)."""
    if not wanted(enabled):
        return _Silent(total)
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr,
                dynamic_ncols=True)


class status:
    """A one-line status for one long step: ``"text ..."`` when it starts, the same line
    with its seconds when it ends (on standard error; nothing unless :func:`wanted`).

    >>> from gunpy.progress import status
    >>> with status("generating", enabled=False):
    ...     pass
    """

    def __init__(self, text, *, enabled=None):
        self.text, self.shown = text, wanted(enabled)

    def __enter__(self):
        import time
        self.t0 = time.perf_counter()
        if self.shown:
            print(f"{self.text} ...", end="", file=sys.stderr, flush=True)
        return self

    def __exit__(self, kind, *rest):
        import time
        if self.shown:
            took = time.perf_counter() - self.t0
            end = f"{took:.1f} s" if kind is None else "failed"
            print(f"\r{self.text} ... {end}", file=sys.stderr, flush=True)
        return False
