"""``jax.debug.log`` (JAX's logging twin of ``jax.debug.print``) routed as its prints are:
rows with their file:line, batch element and level; Python logging keeps what JAX
gives it, and JAX's own function comes back when the route is taken out."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import pytest

from jaxdbg.capture import jax_print_routing, prints
from jaxdbg.internals import jax_api
from jaxdbg.runtime import jax_routes

pytestmark = pytest.mark.skipif(not hasattr(jax.debug, "log"), reason="this JAX has no jax.debug.log")


@pytest.fixture
def routed():
    collected: list[prints.PrintRow] = []
    jax_print_routing.route_jax_print()
    try:
        with prints.sink_installed(collected.append):
            yield collected
    finally:
        jax_print_routing.unroute_jax_print()


def _line_of(text: str) -> int:
    with open(__file__) as source:
        return next(n for n, line in enumerate(source, 1) if text in line and "_line_of" not in line)


def test_log_rows_go_to_the_sink_with_their_line_batch_element_and_level(routed):
    def step(x):
        jax.debug.log("loss {x}", x=x)  # the logged line
        return x * 2

    jax.jit(jax.vmap(step))(jnp.arange(2.0))
    assert [r.text for r in routed] == ["loss 0.0", "loss 1.0"]
    assert all(r.level == logging.INFO and r.level_name == "INFO" and r.from_jax for r in routed)
    assert [r.site.lineno for r in routed] == [_line_of("# the logged line")] * 2
    assert [r.site.batch_label for r in routed] == ["batch 1/2", "batch 2/2"]


def test_the_two_call_form_is_routed_too(routed):
    jax.jit(lambda x: jax.debug.log(ordered=True)("ordered {}", x))(3)
    assert [(r.text, r.ordered, r.level) for r in routed] == [("ordered 3", True, logging.INFO)]


def test_logging_enabled_for_info_still_gets_the_record(routed, caplog):
    with caplog.at_level(logging.INFO, logger=jax_api.debug_log_logger().name):
        jax.jit(lambda x: jax.debug.log("kept {}", x))(5)  # the kept line
    assert [r.text for r in routed] == ["kept 5"]
    (record,) = [r for r in caplog.records if r.getMessage() == "kept 5"]
    assert record.levelno == logging.INFO and record.lineno == _line_of("# the kept line")


def test_logging_at_its_default_level_gets_nothing_twice(routed, caplog):
    jax.jit(lambda x: jax.debug.log("quiet {}", x))(6)
    assert [r.text for r in routed] == ["quiet 6"]
    assert not [r for r in caplog.records if r.getMessage() == "quiet 6"]


def test_without_a_sink_a_row_is_a_logging_record_as_jax_makes_it(caplog, capsys):
    jax_print_routing.route_jax_print()
    try:
        with caplog.at_level(logging.INFO, logger=jax_api.debug_log_logger().name):
            jax.jit(lambda x: jax.debug.log("alone {}", x))(7)  # the lone line
    finally:
        jax_print_routing.unroute_jax_print()
    (record,) = [r for r in caplog.records if r.getMessage() == "alone 7"]
    assert record.lineno == _line_of("# the lone line") and record.name == jax_api.debug_log_logger().name
    assert "alone" not in capsys.readouterr().out  # a log row is never a print


def test_routing_off_and_unrouting_give_jax_its_own_function(routed, caplog):
    prints.set_routing(False)
    try:
        with caplog.at_level(logging.INFO, logger=jax_api.debug_log_logger().name):
            jax.jit(lambda x: jax.debug.log("theirs {}", x))(8)
    finally:
        prints.set_routing(True)
    assert not routed and [r.getMessage() for r in caplog.records if "theirs" in r.getMessage()] == ["theirs 8"]
    assert jax_routes.LOG is not None and jax_routes.LOG.installed
    jax_print_routing.unroute_jax_print()
    assert jax.debug.log is jax_routes.LOG.original() and not jax_routes.LOG.installed
    jax_print_routing.route_jax_print()  # the fixture takes it out again
