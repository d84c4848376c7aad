"""nbconvert's configuration for the docs build beside the test run (noxfile.DocsBuildAside):
the notebooks' kernels talk over Unix sockets, so they take no TCP port that a test's
kernel or server has chosen and not yet bound. The sockets' path is absolute: the
kernel runs in the notebook's folder, its client in the checkout."""

import os
import tempfile

folder = os.path.join(tempfile.gettempdir(), f"jaxdbg-docs-kernels-{os.getuid()}")
os.makedirs(folder, exist_ok=True)

c = get_config()  # noqa: F821 (given by traitlets when it loads this file)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(folder, "kernel")
