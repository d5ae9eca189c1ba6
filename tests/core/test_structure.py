"""gunpy's modules and functions stay small enough to read (issue 13).

* Every ``.py`` module under ``gunpy/`` has at most 600 lines.
* Every function (``def`` or ``async def``, nested ones and methods too) has at most
  100 lines, counted from its ``def`` line to its last line (decorators left out),
  unless it is a kernel written in numbered steps: its name contains ``kernel`` (a
  kernel, or a factory building kernels such as ``cuda_kernel``) and its lines hold
  a comment ``# 1.`` and, after it, a comment ``# 2.`` (STYLE.md: kernels are
  commented in numbered steps, and such a kernel reads best in one piece).

A failure names every offender with its line count.
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2] / "gunpy"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100

_STEP_1 = re.compile(r"#\s*1\.")
_STEP_2 = re.compile(r"#\s*2\.")


def _modules():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path):
    return path.relative_to(ROOT.parent).as_posix()


def is_kernel_in_numbered_steps(node, lines):
    """A function named ``*kernel*`` whose lines hold ``# 1.`` and, later, ``# 2.``."""
    if "kernel" not in node.name:
        return False
    body = "\n".join(lines[node.lineno - 1:node.end_lineno])
    first = _STEP_1.search(body)
    return bool(first and _STEP_2.search(body, first.end()))


def test_no_module_over_600_lines():
    long = []
    for path in _modules():
        n = len(path.read_text().splitlines())
        if n > MAX_MODULE_LINES:
            long.append(f"{_rel(path)}: {n} lines")
    assert not long, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(long)


def test_no_function_over_100_lines_but_kernels_in_numbered_steps():
    long = []
    for path in _modules():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES and not is_kernel_in_numbered_steps(node, lines):
                long.append(f"{_rel(path)}:{node.lineno} {node.name}: {n} lines")
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines (not kernels in numbered "
                      "steps):\n" + "\n".join(sorted(long)))


def test_the_kernel_exemption_needs_the_name_and_both_steps_in_order():
    def node_of(src):
        src += "    pass\n"
        return ast.parse(src).body[0], src.splitlines()

    assert is_kernel_in_numbered_steps(*node_of("def cuda_kernel():\n    # 1. a\n    # 2. b\n"))
    assert not is_kernel_in_numbered_steps(*node_of("def cuda_kernel():\n    # 2. a\n    # 1. b\n"))
    assert not is_kernel_in_numbered_steps(*node_of("def cuda_kernel():\n    # 1. a\n"))
    assert not is_kernel_in_numbered_steps(*node_of("def helper():\n    # 1. a\n    # 2. b\n"))


def test_every_package_is_installed():
    """setup.cfg names each package folder under gunpy/ (a split module that became a
    package is otherwise missing from a normal, non-editable install)."""
    import configparser
    cfg = configparser.ConfigParser()
    top = ROOT.parent
    cfg.read(top / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    found = {".".join(p.parent.relative_to(top).parts) for p in ROOT.rglob("__init__.py")}
    assert found - listed == set()
