"""Debugger frontends in the core package: the terminal prompt, scripted sessions, Colab."""
