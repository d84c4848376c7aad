"""``replay``: run a stopped frame's function again, eagerly, in a stepping debugger."""
