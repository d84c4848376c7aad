"""Every view that draws a model of the engine, registered by importing it: the model
(:class:`jaxdbg.engine.values.drawable.Drawable`) draws itself as text, rich and HTML
through what these register, since the engine imports no view. ``import jaxdbg`` imports
this module once."""

from jaxdbg.views import array_picture_view, sharding_html, sharding_text, tree_view, watch_views

__all__ = ["array_picture_view", "sharding_html", "sharding_text", "tree_view", "watch_views"]
