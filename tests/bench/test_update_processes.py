"""bench.update_processes: the workload's files, and whole runs whose outputs agree."""

from __future__ import annotations

from bench import update_processes


def test_the_updates_file_inserts_the_last_percent_and_deletes_it(tmp_path):
    folder = update_processes.prepared("tc-graph1000", tmp_path)
    lines = (folder / "updates.txt").read_text().splitlines()
    assert lines.count("commit") == 2 and lines[-1] == "commit"
    inserted = lines[:lines.index("commit")]
    deleted = lines[lines.index("commit") + 1:-1]
    assert inserted and all(line.startswith("+e\t") for line in inserted)
    assert [line[1:] for line in deleted] == [line[1:] for line in inserted]
    facts = (folder / "facts" / "e.facts").read_text().splitlines()
    assert not set(facts) & {line[3:] for line in inserted}
    assert update_processes.prepared("tc-graph1000", tmp_path) == folder  # written once


def test_each_engine_runs_as_a_whole_process_with_its_epochs(tmp_path):
    lines = update_processes.measure("tc-graph1000", ["counting", "bf"], 1, tmp_path)
    assert lines[0].startswith("tc-graph1000: whole processes")
    assert lines[1].split()[:2] == ["(no", "engine)"] and "epochs" not in lines[1]
    assert [line.split()[0] for line in lines[2:]] == ["counting", "bf"]
    assert all(" MB  epochs " in line for line in lines[2:])
