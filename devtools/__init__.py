"""What ``dev.py`` (the bootstrap) and ``noxfile.py`` (the sessions) share: the session
lists, the one build recipe and the test matrix's results. Standard library only, so that
``dev.py`` can import it with any Python >= 3.10 before anything is installed."""
