"""Running named conformance checks with declared expected failures, as a function or as a
pytest parametrisation (the shared mechanics of the ``check_*`` suites).

A suite is a tuple of ``(name, check)`` pairs; a check raises on failure. Known failures are
declared as data, ``{"check_name": "reason"}``, and are strict: a declared failure that passes is
an error, and naming an unknown check is a ValueError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

NamedChecks = Sequence[tuple[str, Callable]]


def declared_failures(checks: NamedChecks, expected_failures: Mapping[str, str] | None) -> dict:
    """The declared failures, after checking that each names a check of the suite."""
    expected = dict(expected_failures or {})
    unknown = expected.keys() - {name for name, _ in checks}
    if unknown:
        raise ValueError(f"expected_failures names unknown checks: {sorted(unknown)}")
    return expected


def run_checks(checks: NamedChecks, args: tuple,
               expected_failures: Mapping[str, str] | None) -> dict[str, str]:
    """Call every check with ``args``; check name -> "passed" or "expected failure: <reason>".
    Raises AssertionError naming every unexpected outcome (a failure, or a declared failure
    that passed)."""
    expected = declared_failures(checks, expected_failures)
    outcomes, problems = {}, []
    for name, check in checks:
        try:
            check(*args)
        except Exception as error:  # any exception is a failed check
            if name in expected:
                outcomes[name] = f"expected failure: {expected[name]}"
            else:
                problems.append(f"{name} failed: {type(error).__name__}: {error}")
        else:
            if name in expected:
                problems.append(f"{name} passed but is declared failing ({expected[name]})")
            else:
                outcomes[name] = "passed"
    if problems:
        raise AssertionError("\n".join(problems))
    return outcomes


def check_params(checks: NamedChecks, expected_failures: Mapping[str, str] | None) -> list:
    """The checks as ``pytest.param`` values with their names as ids; declared failures carry a
    strict xfail mark with their reason. Imports pytest."""
    import pytest

    expected = declared_failures(checks, expected_failures)
    return [
        pytest.param(check, id=name, marks=[pytest.mark.xfail(reason=expected[name], strict=True)]
                     if name in expected else [])
        for name, check in checks
    ]
