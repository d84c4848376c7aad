"""What the views draw of a value: summaries, locals' rows, array pictures, sharding layouts."""
