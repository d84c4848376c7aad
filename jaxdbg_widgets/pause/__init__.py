"""Keeping widget messages flowing while a breakpoint holds the cell."""
