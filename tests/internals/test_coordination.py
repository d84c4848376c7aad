"""Fails loudly when the coordination service's client (the transport of a
jax.distributed job's debugger) moves or changes: jaxdbg/internals/coordination.py."""

from __future__ import annotations

import jax
import pytest

from jaxdbg.internals import coordination
from support.job_launcher import Job


@pytest.mark.parametrize("name", sorted(coordination.names_in_use()))
def test_private_distributed_name_still_exists(name):
    assert coordination.names_in_use()[name], (
        f"{name} is gone in jax {jax.__version__}; update jaxdbg/internals/coordination.py"
    )


def test_no_store_outside_a_job():
    assert coordination.store() is None


# Both processes use the store as jaxdbg does; process 0 checks what it reads.
STORE = """
import time
from jaxdbg.internals import coordination
store = coordination.store()
client = store.client
print("methods", all(hasattr(client, m) for m in coordination.CLIENT_METHODS), flush=True)
assert (store.process_index, store.process_count) == (PROCESS, 2) and store.coordinator
store.set(f"mine/{PROCESS}", "first")
store.set(f"mine/{PROCESS}", "replaced")  # replacing a value is allowed
print("own", store.try_get(f"mine/{PROCESS}"), flush=True)
store.set(f"t/from{PROCESS}", f"value {PROCESS}")
other = 1 - PROCESS
print("got", store.get(f"t/from{other}", 30), flush=True)
if PROCESS == 1:
    store.set("t/read", "yes")
if PROCESS == 0:
    store.get("t/read", 30)  # process 1 has read what it waits for: the keys may go
    try:
        store.get("t/never", 0.2)
    except coordination.Timeout:
        print("timed out", flush=True)
    print("try", store.try_get("t/never"), store.try_get("t/from1"), flush=True)
    print("dir", sorted(store.dir_get("t/")), flush=True)
    store.delete("t/")
    print("deleted", store.dir_get("t/"), flush=True)
print("live", sorted(store.live_processes()), flush=True)  # a barrier: both ask
"""


@pytest.mark.distributed
def test_the_store_of_a_real_job():
    with Job(STORE, 2) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        first = job.output(0)
    for line in (
        "methods True",
        "own replaced",
        "got value 1",
        "timed out",
        "try None value 1",
        "dir [('t/from0', 'value 0'), ('t/from1', 'value 1'), ('t/read', 'yes')]",
        "deleted []",
        "live [0, 1]",
    ):
        assert line in first, first
