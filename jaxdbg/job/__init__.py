"""One debugger for a whole ``jax.distributed`` job: the debug host, other processes' stops
and prints through the coordination service, and local jobs to try it on one machine.
The public entry points are in :mod:`jaxdbg.distributed`."""
