"""One drawing protocol for the models that draw themselves: as plain text (``str``),
with rich (``__rich_console__``) and as HTML (``_repr_html_``, which notebooks use).

A model class subclasses :class:`Drawable`; its views register how each form is drawn
with ``TheModel.register_drawing(plain=..., rich=..., html=...)`` when they are
imported (``import jaxdbg`` imports them), so that a model never imports its views.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterator

FORMS = ("plain", "rich", "html")


class Drawable:
    """A model drawn by the views registered for its class."""

    _drawings: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def register_drawing(
        cls,
        *,
        plain: Callable[[Any], str] | None = None,
        rich: Callable[[Any], Iterator[Any]] | None = None,
        html: Callable[[Any], str] | None = None,
    ) -> None:
        """Set how this class is drawn as plain text, with rich, or as HTML."""
        if "_drawings" not in vars(cls):  # each model class has its own views
            cls._drawings = {}
        for form, draw in zip(FORMS, (plain, rich, html)):
            if draw is not None:
                cls._drawings[form] = draw

    def drawn_model(self) -> Any:
        """What the drawings are given: the object itself, unless it wraps its model."""
        return self

    def drawn(self, form: str) -> Any:
        draw = type(self)._drawings.get(form)
        if draw is None:
            raise LookupError(
                f"no {form} drawing of {type(self).__name__} is registered (import jaxdbg registers them)"
            )
        return draw(self.drawn_model())

    def __str__(self) -> str:
        return str(self.drawn("plain"))

    def _repr_html_(self) -> str:
        return str(self.drawn("html"))

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        yield from self.drawn("rich")
