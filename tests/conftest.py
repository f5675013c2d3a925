"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from herbrand.workloads.shared import workloads_root


@pytest.fixture(scope="session")
def workloads_dir() -> Path:
    """The shared workloads: $HERBRAND_WORKLOADS, else ../shared/workloads beside the checkout."""
    return workloads_root()
