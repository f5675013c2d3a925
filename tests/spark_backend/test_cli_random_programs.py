"""Random stratified programs (``tests.strategies``) run through ``herbrand run`` on Spark and
locally: the output files are byte-identical. Spark reads the ``.input`` files and writes the
``.output`` files itself (``materialize_files``); the session of conftest.py is reused by
every run."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings

from herbrand import cli
from herbrand.framework import io
from herbrand.framework.syntax import Directive
from tests.strategies import programs_with_facts

SPARK = ["--backend", "spark", "--master", "local[2]", "--spark-conf", "spark.ui.enabled=false",
         "--spark-conf", "spark.ui.showConsoleProgress=false"]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs_with_facts(atom_expressions=True))
def test_random_programs_write_the_same_files_on_spark_as_locally(spark, tmp_path_factory,
                                                                   case):
    program, facts = case
    directives = [Directive("input", name) for name in facts]
    directives += [Directive("output", d.name) for d in program.declarations]
    program = dataclasses.replace(program, directives=tuple(directives))
    root = tmp_path_factory.mktemp("cli")
    (root / "p.dl").write_text(str(program))
    for name, rows in facts.items():
        io.write_csv(root / "facts" / f"{name}.facts", rows)
    for out, options in (("local", []), ("spark", SPARK)):
        status = cli.main(["run", str(root / "p.dl"), "-F", str(root / "facts"),
                           "-D", str(root / out), "--no-progress", *options])
        assert status == 0, (out, str(program))
    for declaration in program.declarations:
        name = f"{declaration.name}.csv"
        assert (root / "spark" / name).read_bytes() == (root / "local" / name).read_bytes(), \
            (name, str(program))
