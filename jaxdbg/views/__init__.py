"""Renderers of the engine's data: ``text`` (plain) and ``html`` (markupsafe; notebooks),
drawn from what is written once here: ``phrases`` (the prompt, the note for a frame without locals, ...),
``source`` (numbered source lines), ``palette`` (every colour) and ``theme`` (inline styles).
The terminal's rich rendering lives with the terminal backend, :mod:`jaxdbg.frontends.cli`."""
