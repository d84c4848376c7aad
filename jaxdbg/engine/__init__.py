"""The UI-agnostic debugger: Session, commands, evaluation, summaries, serving stops, registry."""
