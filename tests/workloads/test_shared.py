import numpy as np
import pytest

from herbrand import materialize, parse
from herbrand.framework import io
from herbrand.framework.errors import FactsError
from herbrand.framework.storage import Database
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import NUMBER
from herbrand.workloads import (
    dyre_edges,
    dyre_program,
    lubm1_triples,
    rdfs_ontology,
    shared,
    souffle_cases,
    workloads_root,
    write_facts_dir,
)


def test_workloads_root_default_is_beside_the_checkout(monkeypatch):
    monkeypatch.delenv(shared.ENV_VAR, raising=False)
    root = workloads_root()
    assert (root / "README.md").is_file()
    assert root == (shared.CHECKOUT / ".." / "shared" / "workloads").resolve()


def test_workloads_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(shared.ENV_VAR, str(tmp_path))
    assert workloads_root() == tmp_path
    monkeypatch.setenv(shared.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(FactsError, match="HERBRAND_WORKLOADS=.*missing: not a directory"):
        workloads_root()


def test_workloads_root_not_found_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(shared.ENV_VAR, raising=False)
    monkeypatch.setattr(shared, "CHECKOUT", tmp_path / "checkout")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FactsError, match="set HERBRAND_WORKLOADS"):
        workloads_root()


@pytest.mark.parametrize(("name", "count"), [("graph1000", 1_009), ("graph10000", 9_206)])
def test_dyre_edges_counts(name, count):
    edges = dyre_edges(name)
    assert edges.shape == (count, 2) and edges.dtype == np.int64
    assert len(np.unique(edges, axis=0)) == count


def test_lubm1_triples_counts_and_codes():
    triples = lubm1_triples()
    assert triples.shape == (100_838, 3) and triples.dtype == np.int64
    assert len(np.unique(triples, axis=0)) == 100_838
    assert set(range(5)) <= set(np.unique(triples[:, 1]).tolist())


def test_dyre_programs():
    assert dyre_program("tc").name == "tc.dl"
    assert dyre_program("rdfs.dl").is_file()
    with pytest.raises(FactsError, match="nope.dl: no such workload"):
        dyre_program("nope")


def test_souffle_cases_tier_a():
    cases = souffle_cases("tierA_plain")
    assert len(cases) == 80
    assert [c.name for c in cases] == sorted(c.name for c in cases)
    for case in cases:
        assert case.program.is_file() and case.program.suffix == ".dl"
        assert case.expected, case.name
        assert all(p.is_file() and p.suffix == ".csv" for p in case.expected.values())
    access1 = next(c for c in cases if c.name == "access1")
    assert set(access1.expected) == {"High", "Low", "Medium"}
    assert access1.facts_dir.is_dir() and access1.expected_stdout is None
    assert hash(access1) == hash(access1)


def test_souffle_cases_with_several_fact_folders():
    cases = {c.name: c for c in souffle_cases("tierB_arith_agg")}
    pell = cases["lucas/pell"]
    assert "lucas" not in cases
    assert pell.program.name == "lucas.dl" and pell.facts_dir == pell.directory
    assert (pell.facts_dir / "lim.facts").is_file() and set(pell.expected) == {"lucas"}


def test_souffle_cases_unknown_tier_lists_tiers():
    with pytest.raises(FactsError, match="no such tier.*tierA_plain"):
        souffle_cases("tierZ")


def test_write_facts_dir_feeds_the_dyre_programs(tmp_path):
    edges = dyre_edges("graph1000")
    triples = rdfs_ontology(20, 8, 100, seed=1)
    facts = write_facts_dir(tmp_path / "facts", {"e": edges, "t": triples})
    for name, rows in (("tc", edges), ("rdfs", triples)):
        program = parse(dyre_program(name))
        database = io.load_inputs(program, Database({}, SymbolTable()), facts)
        (relation,) = program.inputs
        assert database[relation].to_set() == set(map(tuple, rows.tolist()))


def _crdt_inputs(edits: int | None = None) -> dict[str, np.ndarray]:
    """The CRDT edit operations, the insertions cut to the first ``edits`` (removals of
    elements not inserted change nothing)."""
    read = {name: io.read_facts(shared.crdt_facts_dir() / f"{name}.txt", (NUMBER,) * arity,
                                SymbolTable(), delimiter=" ", relation=name).rows
            for name, arity in (("insert", 4), ("remove", 2))}
    return {"insert_input": read["insert"][:edits], "remove_input": read["remove"]}


def test_crdt_demand_rules_keep_what_the_program_outputs():
    """On the first 3,000 edits (the flat program's skipBlank stays small), restricting
    skipBlank changes skipBlank only."""
    inputs = _crdt_inputs(3000)
    flat = materialize(shared.crdt_program(demand=False), inputs)
    demand = materialize(shared.crdt_program(), inputs)
    assert len(demand["skipBlank"]) < len(flat["skipBlank"])
    for relation in ("nextElem", "nextVisible", "result"):
        assert len(flat[relation]) > 0
        assert demand[relation].rows.tolist() == flat[relation].rows.tolist(), relation


def test_crdt_demand_program_on_every_edit():
    database = materialize(shared.crdt_program(), _crdt_inputs())
    assert {relation: len(database[relation]) for relation in
            ("insert", "remove", "skipBlank", "nextVisible", "result")} == {
        "insert": 182_315, "remove": 77_463, "skipBlank": 182_314, "nextVisible": 104_851,
        "result": 104_653}


def test_crdt_program_without_the_rules_to_restrict(monkeypatch):
    monkeypatch.setattr(shared, "CRDT_SKIP_BLANK_DEMAND", {"skipBlank(x) :- gone(x).": ""})
    with pytest.raises(FactsError, match="query_flat.dl: no rule 'skipBlank"):
        shared.crdt_program()
