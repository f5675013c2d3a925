"""The local facts reader (``io.load_inputs``) on the shared reader cases, on both of its
paths: pyarrow's (wherever ``arrow_io``'s checks let it read a file) and the exact one."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conformance.reader_cases import case_params, local_outcome

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None


@pytest.mark.parametrize("case", case_params())
def test_local_reader(case, tmp_path):
    assert local_outcome(case, tmp_path, arrow=False) == case.expected_outcome()


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow is not installed")
@pytest.mark.parametrize("case", case_params())
def test_local_reader_through_pyarrow(case, tmp_path):
    assert local_outcome(case, tmp_path, arrow=True) == case.expected_outcome()
