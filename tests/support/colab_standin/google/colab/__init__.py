"""A stand-in for Colab's ``google.colab`` package, used only by the tests.

Colab cannot run here. Put ``tests/support/colab_standin`` on a kernel's PYTHONPATH and
``import google.colab`` works there; :mod:`google.colab.output` records what is
evaluated and answers ``eval_js`` over the kernel's stdin channel, as Colab does.
"""
