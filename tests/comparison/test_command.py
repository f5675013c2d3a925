"""herbrand compare end to end: the grid, the progress, the table, the files, the exit status."""

from __future__ import annotations

import pytest

from herbrand.cli import main


def test_compare_two_configurations_of_a_tiny_program(tc_files, tmp_path, capsys):
    program, facts = tc_files
    status = main(["compare", str(program), "-F", str(facts), "--index", "hash",
                   "--peers", "none", "--repeat", "1", "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.splitlines()[0] == "tc: 15 tuples, 1 whole process(es) per configuration"
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["native", "relational/hash"]
    assert err.splitlines()[0].startswith("[1/2] native: ")  # native with its own indexes
    assert "compared 2 configurations of tc in " in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "compare-times.png", "compare.csv", "compare.json"]


def test_workloads_are_listed_and_a_bad_call_is_one_line(capsys):
    assert main(["compare", "--list-workloads"]) == 0
    assert "tc-graph10000: TC, dyre graph10000" in capsys.readouterr().out
    assert main(["compare", "--workload", "nope"]) == 1
    assert capsys.readouterr().err == ("herbrand: error: unknown workload 'nope'; known: "
                                       "tc-graph10000, rdfs-lubm1, tc-rmat2048, tc-gnp1000, "
                                       "tc-chain2000, sg-tree3000, andersen5000, counter100k, "
                                       "lubm-chasebench, tc-gnutella08, tc-random10000, galen-el\n")
    assert main(["compare"]) == 1
    assert "compare takes a PROGRAM (with -F FACTS) or --workload NAME" in \
        capsys.readouterr().err
    assert main(["compare", "x.dl", "--evaluator", "natve"]) == 1
    assert capsys.readouterr().err.startswith("herbrand: error: unknown evaluator 'natve'")


@pytest.mark.parametrize("peers", ["souffle,nope"])
def test_unknown_peer_is_refused(peers, capsys):
    assert main(["compare", "x.dl", "--peers", peers]) == 1
    assert "--peers: unknown peer 'nope'" in capsys.readouterr().err


def test_a_comma_inside_brackets_belongs_to_its_item():
    from herbrand.comparison.command import _names

    assert _names("local, parallel:2,spark:local-cluster[2,1,4096],spark:local[2]") == [
        "local", "parallel:2", "spark:local-cluster[2,1,4096]", "spark:local[2]"]
    assert _names(None) == [] and _names(" , ") == []
