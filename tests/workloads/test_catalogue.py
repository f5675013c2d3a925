"""The shared workloads by name: sizes, and their files prepared once."""

from __future__ import annotations

import pytest

from herbrand.framework.errors import UsageError
from herbrand.workloads.catalogue import WORKLOADS, UnknownWorkloadError, prepare, spec


def test_every_workload_has_a_smoke_size_or_is_heavy():
    for name in WORKLOADS:
        assert "smoke" in spec(name).sizes or name in ("tc-gnutella08", "galen-el")
        assert spec(name).title


def test_prepare_writes_the_files_once(tmp_path):
    prepared = prepare("tc-chain2000", "smoke", tmp_path)
    assert prepared.program.read_text().startswith(".decl e")
    assert prepared.inputs == {"e": prepared.facts / "e.facts"}
    assert len(prepared.inputs["e"].read_text().splitlines()) == 100
    assert prepared.expected == {"tc": 5050}
    stamp = prepared.inputs["e"].stat().st_mtime_ns
    assert prepare("tc-chain2000", "smoke", tmp_path).inputs["e"].stat().st_mtime_ns == stamp
    with pytest.raises(UsageError, match="no 'smoke' size"):
        prepare("galen-el", "smoke", tmp_path)
    with pytest.raises(UnknownWorkloadError, match="unknown workload 'nope'; known: tc-graph"):
        prepare("nope", "smoke", tmp_path)


def test_prepared_workloads_know_their_peer_shape(tmp_path):
    tc = prepare("tc-chain2000", "smoke", tmp_path)
    assert (tc.shape.name, tc.shape.output, tc.headline) == ("tc", "tc", "tc")
    assert prepare("andersen5000", "smoke", tmp_path).shape is None
