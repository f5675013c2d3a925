"""One configuration measured: repeated whole runs checked against a reference, and warm
in-process seconds."""

from __future__ import annotations

from herbrand.comparison.configurations import Configuration
from herbrand.comparison.measure import measure, measure_warm
from herbrand.comparison.outputs import Output
from herbrand.workloads.catalogue import prepare

HERBRAND, CLINGO, DUCKDB = Configuration(), Configuration(peer="clingo"), Configuration(
    peer="duckdb")


def test_measure_herbrand_and_a_peer_check_the_output(tmp_path):
    prepared = prepare("tc-chain2000", "smoke", tmp_path / "cache")
    herbrand = measure(HERBRAND, prepared, scratch=tmp_path / "run", cache_root=tmp_path,
                       repeat=2, warmup=0)
    assert herbrand.ok, herbrand.detail
    assert len(herbrand.seconds) == 2 and herbrand.rss > 10
    assert herbrand.outputs["tc"].rows == 5050 and herbrand.tuples("tc") == 5050
    wrong = {"tc": Output(5050, herbrand.outputs["tc"].digest + 1)}
    again = measure(HERBRAND, prepared, scratch=tmp_path / "run", cache_root=tmp_path, repeat=1,
                    warmup=0, reference=wrong)
    assert (again.status, again.detail) == ("mismatch", "tc: same size as the reference, "
                                                        "other rows")
    peer = measure(CLINGO, prepared, scratch=tmp_path / "run", cache_root=tmp_path, repeat=1,
                   warmup=0, reference=herbrand.outputs)
    assert peer.ok, peer.detail
    assert peer.outputs == {"tc": Output(5050)}
    unavailable = measure(DUCKDB, prepare("andersen5000", "smoke", tmp_path),
                          scratch=tmp_path / "run", cache_root=tmp_path)
    assert unavailable.status == "unavailable"
    assert "none of the peers' shapes" in unavailable.detail


def test_measure_stops_at_the_first_failed_run(tmp_path):
    prepared = prepare("counter100k", "smoke", tmp_path / "cache")
    result = measure(HERBRAND, prepared, scratch=tmp_path / "run", cache_root=tmp_path,
                     timeout=0.01)
    assert result.status == "timeout" and not result.seconds and result.limit == 0.01


def test_warm_prints_in_process_seconds(tmp_path):
    prepared = prepare("counter100k", "smoke", tmp_path / "cache")
    seconds = measure_warm(HERBRAND, prepared, scratch=tmp_path / "w",
                           repeat=2)
    assert seconds is not None and len(seconds) == 2
    assert measure_warm(CLINGO, prepared, scratch=tmp_path / "w") is None
