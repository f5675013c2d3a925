"""Executors that do not run the driver's interpreter: a decomposed stratum's Python workers
get herbrand from ``--py-files herbrand.zip`` and numpy, numba and pyarrow from a packed
environment unpacked by ``--archives env.tar.gz#env``, as the README's "Running on a cluster"
says, through ``spark-submit`` on ``local-cluster[2,1,1024]``.

The packed environment is built here as venv-pack would build one, without a download: a
virtual environment (``pyvenv.cfg``, ``bin/python``) whose site-packages point at this
interpreter's third-party packages by a ``.pth`` line. A path added that way has its own
``.pth`` files left unread, so herbrand's editable install is not in it: the environment has
numpy and no herbrand, which the test checks before the run, so the run can only pass with the
zip shipped. The kernels come built, in the cache ``spark.executorEnv.HERBRAND_CACHE_DIR``
names, as in the README.
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pyspark

import herbrand
from herbrand.evaluators.native.compiled import cache_directory, kernels
from herbrand.workloads import dyre_edges, dyre_program, write_facts_dir
from tests.herbrand_zip import herbrand_zip

from .conftest import requires_java

pytestmark = requires_java
MASTER = "local-cluster[2,1,1024]"
TC_GRAPH1000 = 11_532


def _packed_environment(folder: Path) -> Path:
    """A virtual environment with this interpreter's third-party packages but not herbrand,
    packed as ``env.tar.gz``."""
    env = folder / "env"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = env / "lib" / version / "site-packages"
    packages.mkdir(parents=True)
    (env / "bin").mkdir()
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    (env / "bin" / "python").symlink_to(base)
    (env / "pyvenv.cfg").write_text(f"home = {base.parent}\ninclude-system-site-packages = "
                                    "false\n")
    (packages / "dependencies.pth").write_text("\n".join(
        [sysconfig.get_paths()["purelib"], *site.getsitepackages()]) + "\n")
    archive = folder / "env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(env, arcname=".")
    return env


def test_decomposed_tc_with_herbrand_zipped_and_a_packed_environment(tmp_path):
    kernels()  # built into the cache the executors are pointed at
    env = _packed_environment(tmp_path)
    probe = subprocess.run([str(env / "bin" / "python"), "-c",
                            "import numpy, numba, pyarrow\nimport herbrand"],
                           capture_output=True, text=True, cwd=tmp_path, env={
                               k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert "No module named 'herbrand'" in probe.stderr, probe.stderr[-500:]
    facts = write_facts_dir(tmp_path / "facts", {"e": dyre_edges("graph1000")})
    cli = Path(herbrand.__file__).with_name("cli.py")
    spark_home = Path(pyspark.__file__).parent
    command = [str(spark_home / "bin" / "spark-submit"), "--master", MASTER,
               "--py-files", str(herbrand_zip(tmp_path / "herbrand.zip")),
               "--archives", f"{tmp_path / 'env.tar.gz'}#env",
               "--conf", f"spark.executorEnv.HERBRAND_CACHE_DIR={cache_directory()}",
               "--conf", "spark.ui.enabled=false",
               "--conf", "spark.sql.shuffle.partitions=4",
               str(cli), "run", str(dyre_program("tc")), "-F", str(facts),
               "-D", str(tmp_path / "out"), "--backend", "spark", "--driver-rows", "0",
               "--no-progress", "--stats"]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment.update(SPARK_HOME=str(spark_home), PYSPARK_PYTHON="./env/bin/python",
                       PYSPARK_DRIVER_PYTHON=sys.executable)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600,
                            cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len((tmp_path / "out" / "tc.csv").read_text().splitlines()) == TC_GRAPH1000
    # spark-submit passes the Python driver's stderr on as its own stdout
    passes = re.search(r"^total\t(\d+)\t", result.stdout, re.MULTILINE)
    assert passes is not None and passes[1] == "2", result.stdout[-2000:]  # decomposed: one job
