"""What a run wrote, and whether two runs agree."""

from __future__ import annotations

import zlib

from herbrand.comparison.outputs import Output, difference, file_summary, output_summary


def test_file_summary_is_independent_of_row_order_and_line_endings(tmp_path):
    rows = [f"{i}\t{i * 7 % 13}" for i in range(1000)]
    one, other, crlf = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    one.write_text("\n".join(rows) + "\n")
    other.write_text("\n".join(reversed(rows)))  # no final newline
    crlf.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    summaries = {file_summary(p, chunk_bytes=97) for p in (one, other, crlf)}
    assert summaries == {Output(1000, sum(zlib.crc32(r.encode()) for r in rows))}
    (tmp_path / "empty.csv").write_text("")
    assert file_summary(tmp_path / "empty.csv") == Output(0, 0)


def test_output_summary_reads_files_and_printed_counts(tmp_path):
    (tmp_path / "tc.csv").write_text("1\t2\n")
    stdout = tmp_path / "stdout.txt"
    stdout.write_text("banner line\nsize\t42\ntc\t99\n")
    summary = output_summary(tmp_path, stdout)
    assert summary["tc"].rows == 1 and summary["tc"].digest is not None  # the file wins
    assert summary["size"] == Output(42)
    assert "banner" not in " ".join(summary)


def test_difference_names_the_relation_and_its_sizes():
    reference = {"tc": Output(3, 10), "other": Output(0, 0)}
    assert difference({"tc": Output(3, 10), "other": Output(0, 0)}, {"tc": 3}, reference, True) \
        is None
    assert "expected 4" in difference({"tc": Output(3, 10)}, {"tc": 4}, None, False)
    assert "other rows" in difference({"tc": Output(3, 11)}, {}, reference, False)
    assert difference({"tc": Output(3)}, {}, reference, False) is None  # a peer's count
    assert "missing" in difference({"tc": Output(3, 10)}, {}, reference, True)
    assert "reference 3" in difference({"tc": Output(2)}, {}, reference, False)
    assert difference({}, {}, None, False) == "no output"
