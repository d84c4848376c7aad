"""The base every layer uses: where Ctrl-C goes, calling user code safely, notices, the
debugger's exceptions and words, and how JAX routes a call to the debugger."""
