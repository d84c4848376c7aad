"""Show a displayable object where the user is looking.

In a notebook kernel, IPython's ``display`` (HTML with a text/plain fallback); anywhere
else, rich's console (colour in a terminal, plain text in a pipe). A checkify ``Error``
is shown as :mod:`jaxdbg.capture.checkify_errors` draws it (``jaxdbg.show(err)``).
"""

from __future__ import annotations

from typing import Any

from jaxdbg.capture import checkify_errors
from jaxdbg.internals import ipykernel_kernel


def show(obj: Any) -> Any:
    """Display ``obj``; for a checkify Error outside a notebook, the view drawn (else None).

    In a notebook it returns None, as ``display`` does: a view returned there would be
    drawn a second time as the cell's result when ``show`` ends the cell.
    """

    view = checkify_errors.view_of(obj)
    if view is not None:
        obj = view
    if ipykernel_kernel.current_kernel() is not None:
        from IPython.display import display

        display(obj)
        return None
    from rich.console import Console

    Console(highlight=False, soft_wrap=True).print(obj)
    return view
