"""Every package a notebook in notebooks/ imports is installed where the notebooks run
outside the test suite: `python3 dev.py lab` and `python3 dev.py docs` (noxfile.py's
LAB_EXTRAS and DOCS_EXTRAS). The training notebook imported Flax and optax, which only
the test venv had, so the docs build of `python3 dev.py docs` failed on a fresh machine."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
# Import names whose distribution is named otherwise.
DISTRIBUTIONS = {"haiku": "dm-haiku", "IPython": "ipython", "PIL": "pillow", "sklearn": "scikit-learn"}
OURS = {"jaxdbg", "jaxdbg_widgets"}


def _imports(notebook: Path) -> set[str]:
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    names = re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", code, re.M)
    return {n for n in names if n not in sys.stdlib_module_names and n not in OURS}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _installed_by(extras: str) -> set[str]:
    """The distributions `pip install -e .[extras]` asks for by name (not their own
    dependencies), with jaxdbg's own dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras.strip(".[]").split(","):
        wanted += project["optional-dependencies"][extra]
    return {_requirement_name(r) for r in wanted}


def _noxfile_constant(name: str) -> str:
    match = re.search(rf'^{name} = "([^"]+)"', (ROOT / "noxfile.py").read_text(), re.M)
    assert match, f"noxfile.py has no {name}"
    return match.group(1)


# What the named distributions bring along, which a notebook may import directly.
BROUGHT_ALONG = {"jax": {"jaxlib", "numpy"}, "ipywidgets": {"ipython"}, "ipykernel": {"ipython"}}


@pytest.mark.parametrize("extras", ["LAB_EXTRAS", "DOCS_EXTRAS"])
def test_every_notebook_import_is_installed_where_the_notebooks_run(extras):
    installed = _installed_by(_noxfile_constant(extras))
    installed |= {d for name in list(installed) for d in BROUGHT_ALONG.get(name, ())}
    missing = {
        f"{notebook.name}: {name}"
        for notebook in sorted((ROOT / "notebooks").glob("*.ipynb"))
        for name in _imports(notebook)
        if DISTRIBUTIONS.get(name, name).lower().replace("_", "-") not in installed
    }
    assert not missing, f"not installed by {extras}: {sorted(missing)} (add them to pyproject.toml's examples extra)"
