"""The ``herbrand`` command: Soufflé-compatible runs, one-line errors, stats, translate."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from herbrand.cli import main
from tests.folder_listing import listing

TC = """.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.output path
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture
def tc_case(tmp_path: Path) -> Path:
    (tmp_path / "tc.dl").write_text(TC)
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text("1\t2\n2\t3\n")
    return tmp_path


def test_run_writes_souffle_layout_csv(tc_case, capsys):
    out = tc_case / "out"
    assert main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(out)]) == 0
    assert (out / "path.csv").read_bytes() == b"1\t2\n1\t3\n2\t3\n"
    assert capsys.readouterr().out == "path\t3\n"


def test_dash_d_prints_to_stdout(tc_case, capsys):
    main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", "-"])
    out = capsys.readouterr().out
    assert "path\n===============\n1\t2\n1\t3\n2\t3\n===============\n" in out


def test_stats_and_summary(tc_case, capsys):
    main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(tc_case),
          "--stats", "--summary", "--fixpoint", "naive"])
    captured = capsys.readouterr()
    assert "iterations" in captured.err and "path" in captured.err
    assert "path: 3 tuples" in captured.out and "materialized in" in captured.out
    phases = captured.err.splitlines()[-1].split("\t")
    assert [phases[0], *phases[1::2]] == ["phases", "start-up", "read and set-up", "strata",
                                          "write"]
    assert all(float(seconds) >= 0 for seconds in phases[2::2])
    assert float(phases[2]) > 0  # the process started before the run (Linux's /proc says when)


@pytest.mark.parametrize(
    ("program", "facts", "message"),
    [
        ("path(x) :- edge(x.\n", None, "tc.dl:1:18: "),
        (TC, "1\tx\n", "edge.facts:1: relation edge: column 2 expects a number, got 'x'"),
        (TC, None, "edge.facts"),
        (TC.replace("path(x, y) :- edge(x, y).", "path(x, y) :- edge(x, x)."), "1\t2\n",
         "variable y"),
    ],
    ids=["syntax", "malformed-facts", "missing-facts", "unsafe-rule"],
)
def test_bad_input_exits_nonzero_with_one_line(tmp_path, capsys, program, facts, message):
    (tmp_path / "tc.dl").write_text(program)
    (tmp_path / "facts").mkdir()
    if facts is not None:
        (tmp_path / "facts" / "edge.facts").write_text(facts)
    status = main(["run", str(tmp_path / "tc.dl"), "-F", str(tmp_path / "facts"), "-D", "-"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and err.startswith("herbrand: error: ")
    assert message in err


def test_unknown_component_lists_the_known_ones(tc_case, capsys):
    status = main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"),
                   "--evaluator", "nope"])
    assert status == 1
    error = capsys.readouterr().err
    assert "unknown evaluator 'nope'; known:" in error
    assert "relational" in error and "substitution" in error


def test_translate_prints_plans_and_delta_variants(tc_case, capsys):
    assert main(["translate", str(tc_case / "tc.dl")]) == 0
    out = capsys.readouterr().out
    assert "Join left=[1] right=[0]" in out and "@delta:path" in out


def test_the_installed_command_runs_without_a_traceback(tmp_path):
    (tmp_path / "bad.dl").write_text(".decl a(x: number)\na(x) :- .\n")
    result = subprocess.run([sys.executable, "-m", "herbrand.cli", "run", str(tmp_path / "bad.dl")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_updates_round_trip_matches_a_run_on_the_final_facts(tc_case, capsys):
    updates = tc_case / "updates.txt"
    updates.write_text("+edge\t3\t4\ncommit\n-edge\t1\t2\n+edge\t4\t1\ncommit\n-edge\t4\t1\n")
    out = tc_case / "out"
    assert main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(out),
                 "--engine", "counting", "--updates", str(updates)]) == 0
    streams = capsys.readouterr()
    lines = streams.err.splitlines()
    assert lines[0] == "epoch\tgiven\tadded\tremoved\tseconds\tstrategy"
    assert [line.split("\t")[:4] for line in lines[1:]] == [
        ["1", "1", "3", "0"], ["2", "2", "3", "3"], ["3", "1", "0", "3"]]
    assert (out / "path.csv").read_text() == "2\t3\n2\t4\n3\t4\n"
    (tc_case / "facts" / "edge.facts").write_text("2\t3\n3\t4\n")
    expected = tc_case / "expected"
    main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(expected)])
    assert (expected / "path.csv").read_text() == (out / "path.csv").read_text()


def test_engine_without_updates_materializes(tc_case, capsys):
    out = tc_case / "out"
    assert main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(out),
                 "--engine", "dred"]) == 0
    assert (out / "path.csv").read_bytes() == b"1\t2\n1\t3\n2\t3\n"


@pytest.mark.parametrize(("text", "extra", "message"), [
    ("+edge\t1\n", ["--engine", "dred"], "updates.txt:1: relation edge has 2 columns"),
    ("+edge\t1\t2\n", [], "--updates needs --engine"),
])
def test_bad_updates_exit_nonzero_with_one_line(tc_case, capsys, text, extra, message):
    updates = tc_case / "updates.txt"
    updates.write_text(text)
    status = main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D",
                   str(tc_case / "out"), "--updates", str(updates), *extra])
    err = capsys.readouterr().err
    assert status == 1 and message in err and len(err.splitlines()) == 1


def test_parallel_backend_with_workers_writes_what_local_writes(tc_case, capsys, monkeypatch):
    """Byte for byte, the parallel backend's outputs formatted on its threads (chunks of two
    values, so every file is several chunks)."""
    from herbrand.framework import csv_writer

    monkeypatch.setattr(csv_writer, "WRITE_CHUNK_VALUES", 2)
    monkeypatch.setattr(csv_writer, "ARROW_MIN_ROWS", 1)  # threads format with pyarrow only
    threads = []
    on_threads = csv_writer._formatted_on_threads
    monkeypatch.setattr(csv_writer, "_formatted_on_threads",
                        lambda *args: threads.append(args[-1]) or on_threads(*args))
    outputs = {}
    for name, extra in {"local": [], "parallel": ["--backend", "parallel", "--workers", "2"]}.items():
        out = tc_case / name
        assert main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", str(out),
                     "--no-progress", *extra]) == 0
        outputs[name] = sorted(p.read_bytes() for p in out.iterdir())
    assert outputs["parallel"] == outputs["local"]
    assert threads and set(threads) == {2}  # only the parallel run, on its 2 workers


def test_a_flag_the_backend_does_not_take_is_a_one_line_error(tc_case, capsys):
    status = main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", "-",
                   "--workers", "2"])
    assert status != 0
    assert "backend 'local' does not take --workers" in capsys.readouterr().err


def _run_tc(case: Path, *flags: str) -> list[str]:
    return ["run", str(case / "tc.dl"), "-F", str(case / "facts"), *flags]


@pytest.mark.parametrize("flags", [
    ["--backend", "local"], ["--backend", "spark"], ["--evaluator", "relational"],
    ["--fixpoint", "naive"], ["--workers", "2"], ["--master", "local[2]"],
    ["--spark-conf", "a=b"], ["--checkpoint-dir", "/tmp"], ["--output-format", "csv"],
])
def test_a_flag_an_incremental_engine_would_ignore_is_refused(tc_case, capsys, flags):
    status = main(_run_tc(tc_case, "-D", "-", "--engine", "counting", *flags))
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert f"herbrand: error: {flags[0]} does not go with --engine" in err


def test_the_flags_an_engine_takes_are_honoured(tc_case, capsys):
    out = tc_case / "out"
    assert main(_run_tc(tc_case, "-D", str(out), "--engine", "dred", "--index", "hash",
                        "--stats", "--summary", "--no-progress")) == 0
    streams = capsys.readouterr()
    assert streams.err.splitlines()[0] == "engine\tstate_tuples\tstate_mb\ttuples\tmb"
    assert streams.err.splitlines()[1].startswith("dred\t")
    assert "path: 3 tuples" in streams.out


@pytest.mark.parametrize("flags", [["--index", "hash"], ["--evaluator", "substitution"],
                                   ["--fixpoint", "naive"]])
def test_a_backend_that_runs_its_own_plans_refuses_evaluator_flags(tc_case, capsys, flags):
    status = main(_run_tc(tc_case, "-D", "-", "--backend", "spark", *flags))
    assert status == 1
    assert f"{flags[0]} does not go with --backend spark" in capsys.readouterr().err


def test_output_format_parquet_needs_a_backend_that_writes_files(tc_case, capsys):
    assert main(_run_tc(tc_case, "-D", "-", "--output-format", "parquet")) == 1
    assert "--output-format parquet needs a backend" in capsys.readouterr().err


@pytest.mark.parametrize(("make", "reason"), [
    (lambda d: d / "a-file", "it is a file, not a directory"),
    (lambda d: d / "a-file" / "below", "cannot create the output directory: not a directory"),
    (lambda d: Path("/proc/herbrand-test"), "cannot create the output directory"),
])
def test_a_bad_output_directory_fails_before_any_input_is_read(tc_case, capsys, make, reason):
    (tc_case / "a-file").write_text("")
    (tc_case / "facts" / "edge.facts").unlink()  # reading it would fail: it must not be read
    status = main(_run_tc(tc_case, "-D", str(make(tc_case))))
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert f"{make(tc_case)}: " in err and reason in err


def test_an_output_file_name_below_the_directory_is_checked_too(tc_case, capsys):
    (tc_case / "tc.dl").write_text(TC.replace(".output path", '.output path(filename="f/p.csv")'))
    (tc_case / "out").mkdir()
    (tc_case / "out" / "f").write_text("")
    assert main(_run_tc(tc_case, "-D", str(tc_case / "out"))) == 1
    assert "out/f: cannot write outputs there: it is a file" in capsys.readouterr().err


SUBFOLDER_OUTPUT = TC + '.output edge(filename="new/edge.csv")\n'
"""TC, also writing ``edge`` into a folder ``new`` below the output directory."""


@pytest.mark.parametrize("flags", [[], ["--engine", "counting"]], ids=["local", "engine"])
@pytest.mark.parametrize("existed", [False, True], ids=["new", "existing"])
def test_a_failed_run_removes_the_output_folders_it_made(tc_case, capsys, flags, existed):
    """The output folders are made before any input is read (``-D out/a``, and ``new`` for
    a ``filename=`` below it); the facts file is missing, and the run removes them again, but
    not ``out`` when it was there before."""
    (tc_case / "tc.dl").write_text(SUBFOLDER_OUTPUT)
    (tc_case / "facts" / "edge.facts").unlink()
    if existed:
        (tc_case / "out").mkdir()
    assert main(_run_tc(tc_case, "-D", str(tc_case / "out" / "a"), "--no-progress", *flags)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "edge.facts: cannot open facts file" in err
    if existed:
        assert listing(tc_case / "out") == {}
    else:
        assert not (tc_case / "out").exists()


INTERRUPTED_WRITE = """
import sys, time
from pathlib import Path
from herbrand.cli import main
from herbrand.framework import io

chunks = io.relation_chunks


def first_then_wait(*args):
    '''A relation's first chunk of text, then a mark that it is written, and a long wait.'''
    yield from list(chunks(*args))[:1]
    Path(sys.argv[1]).touch()
    time.sleep(600)


io.relation_chunks = first_then_wait
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("backend", ["local", "spark"])  # spark: written on its driver
def test_a_run_interrupted_while_writing_leaves_the_outputs_as_they_were(tc_case, backend):
    """SIGINT (Ctrl-C) once ``path.csv``'s first chunk is written: the run ends with its one
    line, the old ``path.csv`` stays whole, no temporary file is left, and ``new``, made by
    the run for ``edge``'s file (not yet written), is removed."""
    (tc_case / "tc.dl").write_text(SUBFOLDER_OUTPUT)
    (tc_case / "out").mkdir()
    (tc_case / "out" / "path.csv").write_bytes(b"old\n")
    script = tc_case / "interrupted.py"
    script.write_text(INTERRUPTED_WRITE)
    mark = tc_case / "written"
    command = [sys.executable, str(script), str(mark), *_run_tc(
        tc_case, "-D", str(tc_case / "out"), "--no-progress", "--backend", backend)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        deadline = time.monotonic() + 120
        while not mark.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=120)
        err = process.stderr.read().decode()
    assert (status, err) == (130, "herbrand: interrupted\n")
    assert listing(tc_case / "out") == {"path.csv": b"old\n"}


def test_a_closed_stdout_ends_the_run_quietly(tc_case):
    edges = "".join(f"{i}\t{i + 1}\n" for i in range(300))
    (tc_case / "facts" / "edge.facts").write_text(edges)
    # --no-progress: a loaded machine may take over a second, which shows progress on stderr
    command = [sys.executable, "-m", "herbrand.cli", *_run_tc(tc_case, "-D", "-", "--no-progress")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.readline()
        process.stdout.close()
        status = process.wait(timeout=120)
        err = process.stderr.read().decode()
    assert status == 141 and err == ""


def test_help_is_plain_text_and_lists_the_choices(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "``" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "sorted_vector" in capsys.readouterr().out


def test_a_usage_error_exits_2_with_the_usage_line(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["run"])
    assert raised.value.code == 2
    assert "usage: herbrand run" in capsys.readouterr().err


def test_counts_of_one_are_singular(tc_case, capsys):
    (tc_case / "facts" / "edge.facts").write_text("1\t2\n")
    assert main(_run_tc(tc_case, "-D", str(tc_case / "out"), "--summary")) == 0
    assert "path: 1 tuple\n" in capsys.readouterr().out


# -- query, translate --magic -------------------------------------------------------------------


def test_query_prints_the_matching_rows_sorted_and_the_count(tc_case, capsys):
    (tc_case / "facts" / "edge.facts").write_text("1\t2\n2\t3\n3\t10\n4\t5\n")
    status = main(["query", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "path(1, y)"])
    out, err = capsys.readouterr()
    assert status == 0
    assert out == "1\t2\n1\t3\n1\t10\n"
    assert err == "3 answers\n"


@pytest.mark.parametrize("flags", [["--no-magic"], ["--evaluator", "substitution"],
                                   ["--index", "btree"]])
def test_query_flags_give_the_same_answers(tc_case, capsys, flags):
    status = main(["query", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "path(x, 3)",
                   *flags])
    assert status == 0
    assert capsys.readouterr().out == "1\t3\n2\t3\n"


def test_query_explain_plan_prints_the_rewrite_to_stderr(tc_case, capsys):
    main(["query", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "path(1, _)",
          "--explain-plan"])
    out, err = capsys.readouterr()
    assert out == "1\t2\n1\t3\n"
    assert err.startswith("// goal path(1, _): answered from path_bf\n")
    assert "path_bf(x, z) :- magic_path_bf(x), path_bf(x, y), edge(y, z).\n" in err


def test_translate_magic_prints_the_rewritten_program(tc_case, capsys):
    assert main(["translate", "--magic", "path(1, y)", str(tc_case / "tc.dl")]) == 0
    out = capsys.readouterr().out
    assert "magic_path_bf(1).\n" in out and ".decl magic_path_bf(x: number)\n" in out


@pytest.mark.parametrize(("goal", "message"), [
    ("reach(1, y)", "goal:1:1: undeclared relation reach"),
    ("path(1)", "goal:1:1: path has 1 argument(s) here but 2"),
    ("path(1, ", "goal:1:8: expected a term but found end of input"),
    ('path("a", y)', "goal:1:1: argument x of path is a number"),
])
def test_a_bad_goal_is_one_line(tc_case, capsys, goal, message):
    status = main(["query", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), goal])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and err.startswith(f"herbrand: error: {message}")


def test_run_applies_the_magic_transform_pragma(tc_case, capsys):
    program = tc_case / "tc.dl"
    program.write_text('.pragma "magic-transform" "*"\n' + TC.replace(".output path", "")
                       .replace(".printsize path", "") + ".decl q(y: number)\n.output q\n"
                       "q(y) :- path(2, y).\n")
    assert main(["run", str(program), "-F", str(tc_case / "facts"), "-D", str(tc_case)]) == 0
    assert (tc_case / "q.csv").read_text() == "3\n"
    assert sorted(p.name for p in tc_case.glob("*.csv")) == ["q.csv"]


def test_running_out_of_memory_is_one_line_not_a_traceback(tc_case, capsys, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("herbrand.run_command.materialize_with_stats", exhausted)
    assert main(["run", str(tc_case / "tc.dl"), "-F", str(tc_case / "facts"), "-D", "-",
                 "--no-progress"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("herbrand: error: out of memory") and error.count("\n") == 1
