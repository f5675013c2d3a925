"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def workloads_dir() -> Path:
    """The shared workloads: $HERBRAND_WORKLOADS, else ../shared/workloads beside the checkout."""
    default = Path(__file__).resolve().parents[1].parent / "shared" / "workloads"
    return Path(os.environ.get("HERBRAND_WORKLOADS", default))
