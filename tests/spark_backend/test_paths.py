"""Spark reads and writes the files the local backend does, or refuses a name in one line
before anything runs; a Parquet output says where it went."""

from __future__ import annotations

import io as text_io

import pyarrow.parquet as pq
import pytest

import herbrand
from herbrand.cli import main
from herbrand.framework import io
from herbrand.framework.errors import FactsError, OutputError, UsageError
from herbrand.spark_backend import paths
from tests.spark_backend.edge_files import FACTS, PROGRAM, facts_dir

EDGES = ".decl e(x: number, y: number)\n.input e{input}\n.output e{output}\n"


def _edges(input_params: str = "", output_params: str = "") -> herbrand.Program:
    return herbrand.parse(EDGES.format(input=input_params, output=output_params))


@pytest.mark.parametrize(("filename", "expected"), [
    ("sub/", "out/sub"), ("sub/.", "out/sub"), ("a//./b.csv", "out/a/b.csv"),
    ("/abs/r.csv", "/abs/r.csv"), ("hdfs://name/r.csv", "hdfs://name/r.csv")])
def test_a_file_name_is_joined_as_pathlib_joins_it(filename, expected):
    assert paths.join_path("out", filename) == expected


@pytest.mark.parametrize(("filename", "expected"), [
    ("e.csv", "out/e.parquet"), ("sub/r.csv.gz", "out/sub/r.parquet"), ("r", "out/r.parquet"),
    ("v1.2/r.tsv", "out/v1.2/r.parquet"), (".hidden", "out/.hidden.parquet"),
    ("s3a://b/r.csv", "s3a://b/r.parquet")])
def test_a_parquet_output_is_its_file_name_with_parquet_for_the_extension(filename, expected):
    assert paths.parquet_path("out", filename) == expected


@pytest.mark.parametrize(("program", "error", "place"), [
    (_edges(output_params='(filename="a:b.csv")'), OutputError,
     "<input>:3:9: .output e: filename 'a:b.csv': a file name holding ':'"),
    (_edges(output_params='(filename="sub/http:x.csv")'), OutputError,
     "<input>:3:9: .output e: filename 'sub/http:x.csv': a file name holding ':'"),
    (_edges(input_params='(filename="a:b.facts")'), FactsError,
     "<input>:2:8: .input e: filename 'a:b.facts': a file name holding ':'"),
    (_edges(input_params='(filename=".e.facts.crc")'), FactsError,
     "<input>:2:8: .input e: filename '.e.facts.crc': Hadoop's local file system takes"),
])
def test_names_hadoop_cannot_take_are_refused_naming_the_directive(program, error, place):
    with pytest.raises(error) as raised:
        paths.check_paths(program, "out", "csv")
    assert str(raised.value).startswith(place)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("params", ['(filename="a:b/e.csv")', '(filename="hdfs://n/a:b")',
                                    '(filename="a:b.csv", IO=stdout)'])
def test_a_colon_in_a_folder_a_uri_or_stdout_is_not_refused(params):
    paths.check_paths(_edges(output_params=params), "out", "csv")


def test_parquet_to_stdout_is_refused():
    with pytest.raises(UsageError, match="parquet outputs need an output directory, not -"):
        paths.check_paths(_edges(), "-", "parquet")


def test_two_relations_in_one_parquet_directory_are_refused_one_relation_is_not():
    program = herbrand.parse(EDGES.format(input="", output='(filename="r.csv")')
                             + '.decl f(x: number)\n.output f(filename="r.tsv")\n')
    paths.check_paths(program, "out", "csv")
    with pytest.raises(OutputError, match=r"^<input>:5:9: .output f: the Parquet directory "
                                          r"out/r.parquet is also relation e's \(<input>:3:9\)"):
        paths.check_paths(program, "out", "parquet")
    paths.check_paths(herbrand.parse(EDGES.format(input="", output='(filename="e.csv")')
                                     + '.output e(filename="e.tsv")\n'), "out", "parquet")


def test_a_parquet_output_honours_the_file_name_and_says_so(spark_backend, tmp_path):
    program = _edges(output_params='(filename="sub/r.csv.gz", delimiter=",")')
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_text("1\t2\n2\t3\n")
    run = spark_backend.materialize_files(program, facts, tmp_path / "out",
                                          output_format="parquet")
    table = pq.read_table(tmp_path / "out" / "sub" / "r.parquet")
    assert sorted(zip(*table.to_pydict().values(), strict=True)) == [(1, 2), (2, 3)]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["sub"]
    assert run.notes == (f'<input>:3:9: .output e(filename="sub/r.csv.gz", delimiter=","): '
                         f'written as Parquet to {tmp_path}/out/sub/r.parquet',)


def test_the_cli_prints_the_notes_of_a_parquet_run(spark, tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM.replace(".output path", '.output path(filename="p.tsv")'))
    status = main(["run", str(program), "-F", str(facts_dir(tmp_path, FACTS)), "-D",
                   str(tmp_path / "out"), "--backend", "spark", "--output-format", "parquet",
                   "--no-progress"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err.splitlines() == [
        f'herbrand: note: {program}:6:9: .output path(filename="p.tsv"): written as Parquet '
        f'to {tmp_path}/out/p.parquet']
    assert (tmp_path / "out" / "p.parquet").is_dir()


@pytest.mark.parametrize("filename", ["sub/", "sub/."])
def test_a_file_name_ending_in_a_slash_or_dot_is_the_local_backend_s_file(spark_backend,
                                                                           tmp_path, filename):
    program = _edges(output_params=f'(filename="{filename}")')
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_text("1\t2\n2\t3\n")
    spark_backend.materialize_files(program, facts, tmp_path / "spark")
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local")
    for out in ("spark", "local"):
        assert [p.name for p in (tmp_path / out).iterdir()] == ["sub"]
    assert (tmp_path / "spark" / "sub").read_bytes() == (tmp_path / "local" / "sub").read_bytes()


def _one_error_line(capsys, *argv: str) -> str:
    assert main(list(argv)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line


def test_a_colon_named_output_fails_at_once_in_one_line_and_writes_nothing(spark, tmp_path,
                                                                          capsys):
    program = tmp_path / "p.dl"
    program.write_text(EDGES.format(input="", output='(filename="a:b.csv")'))
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_text("1\t2\n")
    line = _one_error_line(capsys, "run", str(program), "-F", str(facts), "-D",
                           str(tmp_path / "out"), "--backend", "spark", "--no-progress")
    assert line.startswith(f"herbrand: error: {program}:3:9: .output e: filename 'a:b.csv': ")
    assert not (tmp_path / "out").exists()  # the folder the run made, removed
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "out"),
                 "--no-progress"]) == 0  # the local backend writes it
    assert (tmp_path / "out" / "a:b.csv").read_text() == "1\t2\n"


def test_an_output_path_the_file_system_refuses_is_one_line(spark, tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(EDGES.format(input="", output=""))
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_text("1\t2\n")
    (tmp_path / "out" / "e.csv").mkdir(parents=True)
    (tmp_path / "out" / "e.csv" / "kept").write_text("")
    line = _one_error_line(capsys, "run", str(program), "-F", str(facts), "-D",
                           str(tmp_path / "out"), "--backend", "spark", "--no-progress")
    assert line.startswith(f"herbrand: error: {program}:3:9: .output e: cannot write "
                           f"{tmp_path}/out/e.csv: ")


def test_a_facts_directory_hadoop_takes_for_a_scheme_is_one_line(spark_backend, tmp_path):
    with pytest.raises(FactsError, match="^zz:facts/e.facts: cannot read facts file of "
                                         "relation e: java.net.URISyntaxException"):
        spark_backend.materialize_files(_edges(), "zz:facts", tmp_path / "out",
                                        stdout=text_io.StringIO())
