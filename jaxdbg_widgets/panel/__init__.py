"""The debugger panel: one anywidget over a Session, its JSON state and its messages."""
