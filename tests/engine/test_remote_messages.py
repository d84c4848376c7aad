"""What travels between a stop's owner and the job's debug host survives the trip:
JSON through the coordination service's store, as the signed messages carry it."""

from __future__ import annotations

import json
import threading

import jax.numpy as jnp
import numpy as np

from jaxdbg.engine import watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.internals import coordination
from jaxdbg.job import membership as job_mod
from jaxdbg.job import remote_stops
from jaxdbg.job.remote_session import RemoteSession


def _travelled(value: watches.WatchValue) -> watches.WatchValue:
    return remote_stops.watch_value_from_message(json.loads(json.dumps(remote_stops.watch_value_message(value))))


def test_watch_values_of_every_kind_come_back_as_they_left():
    frame = Frame("<cell>", 1, "f", {"x": jnp.arange(4.0), "z": jnp.array([1 + 2j, np.nan]), "n": 3}, {}, ["x\n"], 1)
    session = Session([frame], StopInfo())
    values = session.watch_values(["x.sum()", "x", "z", "str(n)", "1 / 0", "nope"], 5)
    back = [_travelled(v) for v in values]
    assert back == values
    number, array, complex_array, text, raised, missing = back
    assert number.number == 6.0 and number.hit == 5
    assert array.shape == (4,) and array.stats is not None and array.stats.max == 3.0
    assert complex_array.stats is not None and complex_array.stats.mean == 1 + 2j
    assert complex_array.stats.nan_count == 1
    assert text.text == "'3'"
    assert raised.error and "ZeroDivisionError" in raised.error
    assert missing.error and "nope" in missing.error


def test_a_pytree_watchs_leaf_norms_come_back_from_another_process():
    tree = {"b": jnp.array([np.nan, 1.0]), "w": jnp.array([[3.0, 4.0]]), "step": jnp.int32(2)}
    frame = Frame("<cell>", 1, "f", {"tree": tree}, {}, ["x\n"], 1)
    (value,) = Session([frame], StopInfo()).watch_values(["tree"], 7)
    back = _travelled(value)
    assert back.leaves is not None and back.leaves.paths == ("['b']", "['w']")  # float leaves only
    assert back.leaves.norms.tolist() == [1.0, 5.0] and back.leaves.nans.tolist() == [1, 0]
    assert back.leaves.infs.tolist() == [0, 0] and back.number == value.number and back.text == value.text


class _MemoryClient:
    """The coordination service's client methods jaxdbg calls, over one dict."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.changed = threading.Condition()

    def key_value_set(self, key: str, value: str, allow_overwrite: bool = True) -> None:
        with self.changed:
            self.values[key] = value
            self.changed.notify_all()

    def blocking_key_value_get(self, key: str, timeout_ms: int) -> str:
        with self.changed:
            if not self.changed.wait_for(lambda: key in self.values, timeout_ms / 1000):
                raise RuntimeError(f"DEADLINE_EXCEEDED: {key}")
            return self.values[key]

    def key_value_try_get(self, key: str) -> str:
        with self.changed:
            if key not in self.values:
                raise RuntimeError(f"NOT_FOUND: {key}")
            return self.values[key]

    def key_value_dir_get(self, prefix: str) -> list[tuple[str, str]]:
        with self.changed:
            return [(k, v) for k, v in self.values.items() if k.startswith(prefix)]

    def key_value_delete(self, key: str) -> None:
        with self.changed:
            for k in [k for k in self.values if k == key or (key.endswith("/") and k.startswith(key))]:
                del self.values[k]
            self.changed.notify_all()


class _LateReader(_MemoryClient):
    """The host's view of the store: its get of the reply to ``end`` reaches the service
    only after the owner has finished with the stop (a host thread that lost the CPU
    between writing the request and asking for the answer)."""

    def __init__(self, shared: _MemoryClient) -> None:
        self.__dict__ = shared.__dict__
        self.end_sent = threading.Event()

    def key_value_set(self, key: str, value: str, allow_overwrite: bool = True) -> None:
        super().key_value_set(key, value, allow_overwrite)
        if '"end"' in value:
            self.end_sent.set()

    def blocking_key_value_get(self, key: str, timeout_ms: int) -> str:
        if self.end_sent.is_set() and "/out/" in key:
            with self.changed:
                self.changed.wait_for(lambda: not any("/stops/" in k for k in self.values), 30)
        return super().blocking_key_value_get(key, timeout_ms)


def test_the_end_of_a_remote_stop_reaches_the_host_even_when_it_asks_for_the_answer_late():
    owner_client = _MemoryClient()
    host_client = _LateReader(owner_client)
    secret, namespace = b"job secret", "jaxdbg/test/"
    owner_job = job_mod.Job(coordination.Store(owner_client, 1, 2), secret, namespace)
    host_job = job_mod.Job(coordination.Store(host_client, 0, 2), secret, namespace)
    host_job.write("watching/0", {"process": 0})
    frame = Frame("<cell>", 1, "f", {"x": 1}, {}, ["x\n"], 1)
    session = Session([frame], StopInfo())
    ended: list = []
    owner = threading.Thread(
        target=lambda: ended.append(remote_stops.serve_at_host(owner_job, session, None, None, False))
    )
    owner.start()
    announcement = None
    for _ in range(200):
        found = host_job.new_messages("stops/", set())
        if found:
            announcement = found[0]
            break
        owner.join(0.05)
    assert announcement is not None
    remote = RemoteSession(host_job, announcement, remote_stops.info_from_message(announcement["info"]))
    assert remote.execute("p x + 1").text.strip() == "2"
    remote.finish_remotely(Resume.CONTINUE)
    owner.join(30)
    assert ended == [Resume.CONTINUE]
    assert remote.gone is None, remote.gone  # the owner answered; it is not gone
    assert [k for k in owner_client.values if announcement["stop"] in k] == []  # nothing written again


def test_a_stop_with_nothing_to_quit_says_so_at_the_debug_host_too():
    """A NaN stop's call has failed already: Quit leaves it, and says so rather than that
    it stops the computation, also where the job's debug host serves it."""
    info = StopInfo(reason="NaN made by log", nothing_to_quit="the call has failed already")
    carried = remote_stops.info_from_message(json.loads(json.dumps(remote_stops.info_message(info))))
    assert carried.nothing_to_quit == info.nothing_to_quit
    session = Session([Frame("<cell>", 1, "f", {"x": 1}, {}, ["x\n"], 1)], carried)
    assert session.execute("q").text == "Quitting: the call has failed already."
    assert session.resume is Resume.QUIT and session.outcome() == "Quit."
    running = Session([Frame("<cell>", 1, "f", {"x": 1}, {}, ["x\n"], 1)], StopInfo())
    assert "DebuggerQuit" in running.execute("q").text
