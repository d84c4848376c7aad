"""The print log: one widget per cell run that collects ``jaxdbg.print`` rows."""

from jaxdbg_widgets.print_log.log import last_log

__all__ = ["last_log"]
