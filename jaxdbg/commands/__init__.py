"""The debugger's commands (the pdb half; :mod:`jaxdbg.engine` is the bdb half).

Each module registers its commands in :mod:`jaxdbg.engine.command_table` when imported;
``import jaxdbg`` imports them all (``replay``'s come with :mod:`jaxdbg.replay`).
"""
