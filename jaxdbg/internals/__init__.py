"""Adapters over private internals of JAX, IPython and ipykernel, each guarded and tested.

No module outside this package touches a private name of those libraries (a test
scans the sources). One module per concern:

- ``jax_api``: frames, traces, the debugger registry, callback errors of JAX.
- ``jax_programs``: a traced program's equations, read and run up to one or piece by piece.
- ``jax_nan_checks``: JAX's NaN / Inf checks, hooked to tell the pass, devices and value.
- ``jax_host_calls``: a host call XLA keeps where the program puts it, its operands
  received as NumPy arrays (a breakpoint's question and its screening).
- ``ipython_api``: cell labels, short errors, the custom-exception slot, cell events,
  display formatters' type printers, caching a cell's source.
- ``ipywidgets_api``: the widget styles and traits ipywidgets keeps private.
- ipykernel, for a panel that stays clickable while a breakpoint blocks its cell
  (while a cell runs, ipykernel's main shell handles no comm messages):

  - ``ipykernel_kernel``: the running kernel, ipykernel's version, and the SIGINT
    handler it keeps between cells;
  - ``ipykernel_parents``: which cell a thread's output, displays and prompts belong to;
  - ``ipykernel_comms``: routing a comm's messages, and whether it is closed;
  - ``ipykernel_subshells``: a private subshell (>= 7.4) for the panel's comms;
  - ``ipykernel_paused_requests``: kernel/comm info, completion and inspection answered
    during a pause (>= 7.4);
  - ``ipykernel_queued_cells``: cells that arrive behind a paused one;
  - ``ipykernel_pump``: 6.x (Colab), pumping the main shell's queue from a helper thread;
  - ``ipykernel_busy``: whether the main shell runs a cell; keeping it reported busy;
  - ``ipykernel_status``: every private ipykernel name in use, checked by a test.
"""
