"""The IPython extension: ``%load_ext jaxdbg``, ``%jaxdbg``, ``%%checkify``, display formatters."""
