"""Renderers of the engine's data: ``text`` (plain) and ``html`` (markupsafe; notebooks).
The terminal's rich rendering lives with the terminal backend, :mod:`jaxdbg.frontends.cli`."""
