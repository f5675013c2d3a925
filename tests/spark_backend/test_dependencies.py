"""The installed pandas is one pyspark supports: no run of the Spark backend warns about it."""

from __future__ import annotations

import subprocess
import sys
import warnings

from pyspark.sql.pandas.utils import require_minimum_pandas_version


def test_pyspark_accepts_the_installed_pandas_without_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        require_minimum_pandas_version()
    assert [str(w.message) for w in caught] == []


def test_a_spark_run_of_the_cli_prints_no_pandas_warning(tmp_path):
    program = tmp_path / "p.dl"
    program.write_text(".decl e(x: number)\n.decl p(x: number)\n.input e\n.output p\n"
                       "p(x) :- e(x).\n")
    (tmp_path / "e.facts").write_text("1\n2\n")
    command = [sys.executable, "-W", "default", "-m", "herbrand.cli", "run", str(program),
               "-F", str(tmp_path), "-D", str(tmp_path / "out"), "--backend", "spark",
               "--master", "local[1]", "--spark-conf", "spark.ui.enabled=false",
               "--no-progress"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert (tmp_path / "out" / "p.csv").read_text() == "1\n2\n"
    assert "pandas" not in finished.stderr.lower(), finished.stderr
