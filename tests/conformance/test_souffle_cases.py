"""Soufflé's own evaluation tests: each case's outputs, compared as sets of rows.

Cases outside the supported language are listed in LEFT_OUT with the reason, as strict xfails: a
case that starts passing fails the run until it is taken off the list. Cases heavy for a
tuple-at-a-time evaluator are in SLOW (marked ``slow``; they still run).
"""

from __future__ import annotations

import io as text_io

import pytest

import herbrand
from herbrand.framework import io
from herbrand.workloads import souffle_cases

from .configurations import configuration_params

TIERS = ("tierA_plain", "tierB_arith_agg", "tierD_ignorable_directives")

LEFT_OUT: dict[str, str] = {}

SLOW: set[str] = set()


def _case_params():
    params = []
    for tier in TIERS:
        for case in souffle_cases(tier):
            key = f"{tier}/{case.name}"
            marks = []
            if key in LEFT_OUT:
                marks.append(pytest.mark.xfail(strict=True, reason=LEFT_OUT[key]))
            if key in SLOW:
                marks.append(pytest.mark.slow)
            params.append(pytest.param(case, id=key, marks=marks))
    return params


def _lines(text: str) -> set[str]:
    return set(text.splitlines())


@pytest.mark.parametrize("configuration", configuration_params())
@pytest.mark.parametrize("case", _case_params())
def test_case_matches_souffle(case, configuration, tmp_path):
    program = herbrand.parse(case.program)
    facts_dir = case.facts_dir if case.facts_dir.is_dir() else case.directory
    database = herbrand.materialize(program, facts_dir=facts_dir, **configuration)
    stdout = text_io.StringIO()
    io.write_outputs(program, database, tmp_path, stdout=stdout)
    for relation, expected in case.expected.items():
        produced = tmp_path / expected.name
        assert produced.is_file(), f"{relation}: no output written"
        assert _lines(produced.read_text()) == _lines(expected.read_text()), relation
    if case.expected_stdout is not None:
        assert stdout.getvalue() == case.expected_stdout.read_text()


def test_left_out_and_slow_name_real_cases():
    known = {f"{tier}/{case.name}" for tier in TIERS for case in souffle_cases(tier)}
    assert set(LEFT_OUT) <= known and SLOW <= known
