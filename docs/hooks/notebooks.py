"""mkdocs hook: the notebooks in notebooks/ become pages of the site, executed.

The notebooks live in notebooks/ (where `dev.py lab` opens them), not in docs/. mkdocs
only reads files under docs_dir, and a symlink would not survive every checkout, so
this hook adds each notebook to the build's files under `notebooks/<name>.ipynb`, with
its real path as the source. mkdocs-jupyter (which runs after this hook, see the
priority) then renders it, and `nav` names it as if it sat in docs/notebooks/.

Each notebook executes in its own kernel during the build. The kernel inherits this
process's environment, so before a notebook renders the hook sets JAXDBG_COMMANDS to
the commands that answer that notebook's stops (what the notebook's text tells the
reader to type), and JAX_PLATFORMS=cpu. The notebooks that need several devices set
XLA_FLAGS themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SITE_FOLDER = NOTEBOOKS.name

# The commands that answer each notebook's stops, in order (see "Scripted sessions").
COMMANDS = {
    "quickstart.ipynb": (
        "p hidden.shape; pp params[0]['b']; up; p y.shape; c;"  # jit
        "p scaled; c; skip;"  # vmap: 2 of 3, then skip
        "p logits; c;"  # non-finite
        "p y; c"
    ),  # jax.debug.breakpoint()
    "checkify.ipynb": "p ratio; up; p x; c",  # the NaN post-mortem
    "replay.ipynb": (
        "replay; next; next; p i; p total; continue; continue;"  # scan
        "replay; step; step; p mid; where; continue; continue; continue;"  # shard_map
        "where; c;"  # the NaN's stop
        "where; c"
    ),  # the gradient's
    "multiprocess.ipynb": "p y; locals; continue all",  # process 2's stop
    "training.ipynb": "locals; pp grads; whatis model; p jnp.isnan(x).any(axis=1); continue all",
    "sharding.ipynb": None,  # no stops
    "printing.ipynb": None,
}

# None: unset (no stops to answer).
COMMANDS: dict[str, str | None]

_saved_env: dict[str, str | None] = {}


def notebook_names() -> list[str]:
    return sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))


@event_priority(100)  # before mkdocs-jupyter's on_files, which wraps .ipynb files as pages
def on_files(files, config):
    for name in notebook_names():
        # src_dir is the checkout's root, so the page's path in the site and the file's
        # path in the checkout are both notebooks/<name>.
        files.append(
            File(
                f"{SITE_FOLDER}/{name}",
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def _notebook_name(page) -> str | None:
    path = Path(page.file.abs_src_path or "")
    return path.name if path.parent == NOTEBOOKS and path.suffix == ".ipynb" else None


def on_page_markdown(markdown, page, config, files):
    name = _notebook_name(page)
    if name is not None:
        if name not in COMMANDS:
            raise KeyError(f"docs/hooks/notebooks.py: no scripted commands for notebooks/{name}")
        _set_env({"JAXDBG_COMMANDS": COMMANDS[name], "JAX_PLATFORMS": "cpu", "JUPYTER_PREFER_ENV_PATH": "1"})
    return markdown


def on_page_content(html, page, config, files):
    _restore_env()
    return html


def _set_env(values: dict[str, str | None]) -> None:
    for key, value in values.items():
        _saved_env.setdefault(key, os.environ.get(key))
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _restore_env() -> None:
    for key, value in _saved_env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    _saved_env.clear()
