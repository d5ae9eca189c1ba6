"""Replay every failing example the fuzzer ever saved (tests/regressions/*.json)."""

import glob
import json
import os

import pytest

from test_fuzz import CHECKS

FILES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "regressions", "*.json")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_saved_example(path, backend):
    with open(path) as f:
        case = json.load(f)
    CHECKS[case["kind"]](case["spec"], backend, **case["params"])


def test_regression_folder_is_readable():
    assert os.path.isdir(os.path.join(os.path.dirname(__file__), "regressions"))
