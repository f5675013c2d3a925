"""The local facts reader (``io.load_inputs``) on the shared reader cases."""

from __future__ import annotations

import pytest

from tests.conformance.reader_cases import case_params, local_outcome


@pytest.mark.parametrize("case", case_params())
def test_local_reader(case, tmp_path):
    assert local_outcome(case, tmp_path) == case.expected_outcome()
