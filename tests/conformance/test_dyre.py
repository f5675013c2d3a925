"""The DBSP paper's workloads give Soufflé's counts (see shared/workloads/README.md)."""

from __future__ import annotations

import pytest

import herbrand
from herbrand.workloads import dyre_edges, dyre_program, lubm1_triples, write_facts_dir

from .configurations import configuration_params


@pytest.mark.parametrize("configuration", configuration_params())
def test_tc_over_graph1000_has_11532_tuples(configuration):
    database = herbrand.materialize(
        dyre_program("tc"), facts={"e": dyre_edges("graph1000")}, **configuration
    )
    assert len(database["tc"]) == 11_532


@pytest.mark.parametrize("configuration", configuration_params())
def test_rdfs_over_lubm1_has_126732_tuples(configuration, tmp_path):
    facts_dir = write_facts_dir(tmp_path, {"t": lubm1_triples()})
    database = herbrand.materialize(dyre_program("rdfs"), facts_dir=facts_dir, **configuration)
    assert len(database["m"]) == 126_732
