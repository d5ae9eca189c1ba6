"""The documentation runs: docstring examples, the tutorial, the quickstart notebook."""

import doctest
import importlib
import os
import re
import subprocess
import sys

import pytest
import _helpers

ROOT = str(_helpers.ROOT)
DOCS = os.path.join(ROOT, "docs")

MODULES = ["gunpy.graph", "gunpy.io", "gunpy.generators", "gunpy.datasets", "gunpy.atomics",
           "gunpy.functor", "gunpy.registry", "gunpy.backends", "gunpy.operators.context",
           "gunpy.operators.operator",
           "gunpy.operators.advance", "gunpy.operators.reverse_levels",
           "gunpy.operators.sample", "gunpy.operators.neighbor_mode",
           "gunpy.primitives.bfs", "gunpy.primitives.sssp",
           "gunpy.primitives.bc", "gunpy.primitives.bc_weighted", "gunpy.primitives.cc",
           "gunpy.primitives.pagerank",
           "gunpy.blas", "gunpy.blas.ops", "gunpy.blas.algorithms.bfs",
           "gunpy.blas.algorithms.bc", "gunpy.blas.algorithms.sssp",
           "gunpy.blas.algorithms.pagerank", "gunpy.blas.algorithms.triangle_count",
           "gunpy.blas.algorithms.lcc", "gunpy.primitives.lcc", "gunpy.primitives.cdlp",
           "gunpy.primitives.louvain", "gunpy.operators.neighbor_best", "gunpy.operators.contract",
           "gunpy.primitives.kcore", "gunpy.primitives.hits", "gunpy.primitives.ppr",
           "gunpy.primitives.spmv", "gunpy.primitives.color", "gunpy.operators.neighbor_mex",
           "gunpy.primitives.scc", "gunpy.primitives.mst", "gunpy.primitives.geo",
           "gunpy.operators.spgemm", "gunpy.devmath", "gunpy.result", "gunpy.progress",
           "gunpy.io.edgelist", "gunpy.io.mtx", "gunpy.io.metis"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name.startswith("gunpy.primitives") or name in ("gunpy.io", "gunpy.generators"):
        assert result.attempted > 0, f"{name} has no runnable examples"


def _run_python_blocks(path, at_least):
    """Every ```python block of a Markdown file, in order, in one namespace."""
    text = open(path).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= at_least
    ns = {}
    for block in blocks:
        exec(compile(block, os.path.basename(path), "exec"), ns)
    return ns


def test_graphblas_page_runs_as_written():
    """docs/graphblas.md: every example, in its exact words (doctest)."""
    result = doctest.testfile(os.path.join(DOCS, "graphblas.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 30


def test_tutorial_code_runs(capsys):
    from gunpy import registry
    try:
        path = os.path.join(DOCS, "tutorial.md")
        ns = _run_python_blocks(path, 7)
        assert "khop" in ns
        out = capsys.readouterr().out
        assert "17 vertices within reach" in out  # the registered CLI run
        # what the tutorial says a block prints, it prints (up to a line's "...")
        printed = re.findall(r"\nprints\n\n```text\n(.*?)```", open(path).read(), re.S)
        assert printed
        for line in "".join(printed).splitlines():
            assert line.split("...")[0].strip() in out, line
    finally:
        registry.unregister_primitive("khop_depths")


def test_user_guide_snippets_use_existing_names():
    import gunpy
    text = open(os.path.join(DOCS, "user-guide.md")).read()
    for name in re.findall(r"gunpy\.(\w+)\(", text):
        assert hasattr(gunpy, name), name


def test_api_reference_is_up_to_date():
    out = subprocess.run([sys.executable, os.path.join(DOCS, "gen_api.py"), "--check"])
    assert out.returncode == 0, "docs/api.md is stale: run python docs/gen_api.py"


@pytest.mark.large
def test_quickstart_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(os.path.join(DOCS, "quickstart.ipynb"), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


def test_readme_python_blocks_run():
    """The README's Python examples, in its exact words, with their answers checked."""
    ns = _run_python_blocks(os.path.join(ROOT, "README.md"), 2)
    from gunpy.testing import reference_depths
    r, G, source = ns["r"], ns["G"], ns["source"]
    assert r.depth.tolist() == reference_depths(G, source).tolist()
    assert ns["d"] == {v: int(x) for v, x in enumerate(r.depth) if x >= 0}
    assert (r.depth >= 0).sum() > G.num_vertices // 2  # the example shows a real traversal


def test_user_guide_stats_example_runs(capsys):
    """The Stats example, in its exact words, on a small graph (the first block is a
    listing of constructors with placeholder arguments; their names are checked above)."""
    import gunpy
    text = open(os.path.join(DOCS, "user-guide.md")).read()
    block = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "per_iteration" in b]
    assert len(block) == 1
    ns = {"gunpy": gunpy, "G": gunpy.generators.grid_2d(8, 8)}
    exec(compile(block[0], "user-guide.md", "exec"), ns)
    lines = capsys.readouterr().out.strip().splitlines()
    its = ns["r"].stats.per_iteration
    assert len(lines) == len(its) == 15  # an 8 x 8 grid from a corner: 15 levels
    assert lines[0].split()[:4] == ["0", its[0]["direction"], "1", str(its[0]["edges"])]


DEVICE_SECTION = "## Arrays in GPU memory"


def _gpu_python_page():
    """docs/gpu-python.md split: (the text without its device section, that section's
    ```python blocks)."""
    with open(os.path.join(DOCS, "gpu-python.md")) as f:
        text = f.read()
    start = text.index(DEVICE_SECTION)
    end = text.index("\n## ", start + 1)
    blocks = re.findall(r"```python\n(.*?)```", text[start:end], re.S)
    return text[:start] + text[end:], blocks


def _run_doctest(text, name):
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(parser.get_doctest(text, {}, name, name, 0))
    return runner.summarize(verbose=False)


def test_gpu_python_page_runs_as_written():
    """docs/gpu-python.md: every example outside the device section, in its exact words."""
    rest, blocks = _gpu_python_page()
    result = _run_doctest(rest, "gpu-python.md")
    assert result.failed == 0 and result.attempted >= 12
    assert len(blocks) == 6  # numba (blocks 0, 1, 4 and 5), CuPy, PyTorch: run below


@pytest.mark.sim
def test_gpu_python_page_device_arrays_run_as_written():
    """The device section's numba examples, in their exact words (simulator or GPU)."""
    _, blocks = _gpu_python_page()
    result = _run_doctest(blocks[0] + blocks[1] + blocks[4] + blocks[5],
                          "gpu-python.md: numba arrays")
    assert result.failed == 0 and result.attempted >= 18


@pytest.mark.gpu
@pytest.mark.parametrize("library,block", [("cupy", 2), ("torch", 3)])
def test_gpu_python_page_cupy_and_torch_recipes_run_as_written(library, block):
    """The CuPy and PyTorch recipes, where those libraries are installed (the GPU image)."""
    pytest.importorskip(library)
    _, blocks = _gpu_python_page()
    result = _run_doctest(blocks[0] + blocks[block], f"gpu-python.md: {library}")
    assert result.failed == 0 and result.attempted >= 8
