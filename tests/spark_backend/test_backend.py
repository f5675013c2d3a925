"""SparkBackend through the public API: names, instances, master=, and the lazy import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import herbrand
from herbrand.framework.errors import UsageError
from herbrand.framework.registry import BACKENDS
from herbrand.spark_backend.backend import SparkBackend

PROGRAM = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl label(x: number, s: symbol)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
label(x, "start") :- e(x, _), !e(_, x).
"""
FACTS = {"e": [(1, 2), (2, 3), (3, 4)]}


def test_registered_lazily_and_import_herbrand_needs_no_pyspark():
    assert "spark" in BACKENDS
    code = "import herbrand, sys; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_backend_by_name_with_master_reuses_the_active_session(spark):
    database = herbrand.materialize(PROGRAM, facts=FACTS, backend="spark", master="local[2]")
    assert len(database["tc"]) == 6
    assert database.decoded_rows("label") == [(1, "start")]


def test_backend_instance_with_hyperparameters(spark, tmp_path):
    backend = SparkBackend(session=spark, checkpoint_interval=1,
                           checkpoint_dir=str(tmp_path / "checkpoints"), broadcast_rows=0)
    database, stats = herbrand.materialize_with_stats(PROGRAM, facts=FACTS, backend=backend)
    assert len(database["tc"]) == 6
    assert [s.relations for s in stats] == [("tc",), ("label",)]
    assert stats[0].iterations == 4 and stats[0].derived == 6


def test_master_needs_a_backend_that_takes_one():
    with pytest.raises(UsageError, match="does not take a master"):
        herbrand.materialize(PROGRAM, facts=FACTS, backend="local", master="local[2]")
    with pytest.raises(UsageError, match="backend name"):
        herbrand.materialize(PROGRAM, facts=FACTS, backend=SparkBackend(), master="local[2]")
