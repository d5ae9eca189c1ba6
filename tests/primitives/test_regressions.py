"""Replay every saved failing example (tests/primitives/regressions/*.json) on the mode's backend.

The fuzzer (test_fuzz.py) saves the examples it shrinks to; cases written by
hand for bugs found elsewhere sit beside them in the same format, with a
``why`` naming the bug. On the CPU each case runs twice (``cpu_split``): as
shipped, and cut into parallel chunks, where racing writers live.
"""

import glob
import json
import os

import pytest

from test_fuzz import CHECKS

HERE = os.path.join(os.path.dirname(__file__), "regressions")
FILES = sorted(glob.glob(os.path.join(HERE, "*.json")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_saved_example(path, backend, cpu_split):
    with open(path) as f:
        case = json.load(f)
    CHECKS[case["kind"]](case["spec"], backend, **case["params"])


def test_saved_examples_are_well_formed():
    assert len(FILES) >= 5  # an empty folder would skip the replay without a word
    for path in FILES:
        with open(path) as f:
            case = json.load(f)
        assert case["kind"] in CHECKS, path
        assert os.path.basename(path).startswith(case["kind"] + "-"), path
        spec = case["spec"]
        assert {"n", "directed", "edges", "weights"} <= set(spec), path
        assert all(0 <= u < spec["n"] and 0 <= v < spec["n"] for u, v in spec["edges"]), path
        assert spec["weights"] is None or len(spec["weights"]) == len(spec["edges"]), path
