"""Trace and run time: frames, breakpoints, prints, checkify errors, post-mortem, JAX routes."""
