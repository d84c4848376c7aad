"""jaxdbg.distributed.start_local_processes: a real job of local processes, as a notebook
or a script starts one to try the debug host."""

from __future__ import annotations

import pytest

from jaxdbg.distributed import StillRunning, start_local_processes

pytestmark = [pytest.mark.distributed]

# A program in a file of its own, importing a module beside it.
PROGRAM = """\
import helper
import jax.numpy as jnp
print("process", PROCESS, "of", jax.process_count(), "commands", os.environ.get("JAXDBG_COMMANDS"))
print("sum", float(jnp.sum(jnp.arange(4.0))), helper.WORD)
raise SystemExit(PROCESS)
"""


@pytest.mark.matrix
def test_a_program_file_runs_in_every_launched_process_as_a_script(tmp_path, monkeypatch):
    (tmp_path / "step.py").write_text(PROGRAM)
    (tmp_path / "helper.py").write_text("WORD = 'beside'\n")
    monkeypatch.setenv("JAXDBG_COMMANDS", "c")  # for this process only: not passed on
    with start_local_processes(tmp_path / "step.py", processes=2) as job:
        assert job.wait(120) == {0: 0, 1: 1}, job.output(0) + job.output(1)
        for i in (0, 1):
            assert f"process {i} of 2 commands None" in job.output(i)
            assert "sum 6.0 beside" in job.output(i)


def test_an_error_in_the_program_names_its_own_file_and_line(tmp_path):
    (tmp_path / "broken.py").write_text("x = 1\nraise ValueError('at line two')\n")
    with start_local_processes(tmp_path / "broken.py", processes=1) as job:
        assert job.wait(120) == {0: 1}
        assert f'File "{tmp_path / "broken.py"}", line 2' in job.output(0), job.output(0)


def test_a_process_still_running_at_the_deadline_is_named_and_killed():
    with start_local_processes("import time\ntime.sleep(600)\n", processes=2, launch=[1]) as job:
        with pytest.raises(StillRunning, match=r"processes \[1\]"):
            job.wait(timeout=1)
        job.kill(1)
        assert job.returncodes()[1] is not None


def test_wrong_indices_are_refused_with_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match="from 0 to 1, not \\[2\\]"):
        start_local_processes("pass", processes=2, launch=[2])
    with pytest.raises(FileNotFoundError, match="no program at"):
        start_local_processes(tmp_path / "missing.py", processes=1)
    with start_local_processes("import time\ntime.sleep(600)\n", processes=2, launch=[1]) as job:
        with pytest.raises(ValueError, match="was not launched here"):
            job.output(0)
        with pytest.raises(ValueError, match="launched here; join as one of the others"):
            job.join(1)
