"""jaxdbg.distributed.start_local_processes: a real job of local processes, as a notebook
or a script starts one to try the debug host."""

from __future__ import annotations

import socket

import pytest

from jaxdbg.distributed import StillRunning, start_local_processes
from jaxdbg.job import local_processes

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


def test_a_jobs_default_port_is_one_no_connection_or_port_0_bind_can_take_meanwhile():
    """The coordinator binds its port a second or more after it is chosen, in another process.

    A port from the kernel's ephemeral range (where ``bind(0)`` and every outgoing
    connection get theirs) can be taken in that window, and the job then fails to start
    (``Failed to add port to server``). So the default lies below that range, and is
    free now on loopback and on the wildcard address the coordinator binds.
    """
    low, _ = local_processes.ephemeral_ports()
    ports = {int(local_processes.free_address().rsplit(":", 1)[1]) for _ in range(20)}
    assert all(1024 <= port < low for port in ports), (sorted(ports), low)
    assert len(ports) > 1  # random: two jobs started at once do not pick the same one
    for port in ports:
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::")):
            with socket.socket(family) as s:
                s.bind((host, port))
