"""Show a displayable object where the user is looking.

In a notebook kernel, IPython's ``display`` (HTML with a text/plain fallback); anywhere
else, rich's console (colour in a terminal, plain text in a pipe).
"""

from __future__ import annotations

from typing import Any


def show(obj: Any) -> None:
    from jaxdbg.internals import ipykernel_api

    if ipykernel_api.current_kernel() is not None:
        from IPython.display import display

        display(obj)
        return
    from rich.console import Console

    Console(highlight=False, soft_wrap=True).print(obj)
