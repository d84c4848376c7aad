"""Harnesses shared by the tests: kernels, notebooks, transcripts, the lab."""
