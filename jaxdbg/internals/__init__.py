"""Adapters over private internals of JAX, IPython and ipykernel, each guarded and tested."""
