"""The docs site's sources are complete: every page in mkdocs.yml's nav exists, and every
public name of jaxdbg (its ``__all__``) is in the API reference.

The strict build itself (broken links, missing references, a notebook that fails) runs in
``dev.py test`` after pytest; these checks are fast and need no docs tooling.
"""

from __future__ import annotations

import re
from pathlib import Path

import jaxdbg

ROOT = Path(__file__).resolve().parents[2]
MKDOCS_YML = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"
API_PAGE = DOCS / "api.md"
# docs/hooks/notebooks.py adds notebooks/*.ipynb to the site under this folder.
NOTEBOOK_FOLDER = "notebooks/"


def _nav_pages() -> list[str]:
    """Every page path in mkdocs.yml's nav (its `- Title: path.md` lines).

    Read as text so that the check runs where PyYAML is not installed (the core-only
    matrix venvs).
    """
    text = MKDOCS_YML.read_text()
    nav = re.search(r"^nav:\n((?:[ \t]+.*\n?|\n)*)", text, flags=re.M)
    assert nav, "mkdocs.yml has no nav"
    return re.findall(r"^\s*-\s[^:\n]+:\s*(\S+\.(?:md|ipynb))\s*$", nav.group(1), flags=re.M)


def _source_of(page: str) -> Path:
    """Where a nav entry's file lives: the notebooks stay in notebooks/, the rest in docs/."""
    if page.startswith(NOTEBOOK_FOLDER) and page.endswith(".ipynb"):
        return ROOT / page
    return DOCS / page


def test_every_page_in_the_nav_exists():
    pages = _nav_pages()
    assert "api.md" in pages and "getting-started.md" in pages, pages
    missing = [page for page in pages if not _source_of(page).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"


def test_every_notebook_is_in_the_nav():
    pages = set(_nav_pages())
    notebooks = sorted(NOTEBOOK_FOLDER + p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks found"
    assert not [nb for nb in notebooks if nb not in pages], (notebooks, pages)


def test_every_public_name_is_in_the_api_reference():
    documented = set(re.findall(r"^::: jaxdbg\.(\w+)\s*$", API_PAGE.read_text(), flags=re.M))
    undocumented = sorted(set(jaxdbg.__all__) - documented)
    assert not undocumented, f"in jaxdbg.__all__ but without a `::: jaxdbg.NAME` entry in docs/api.md: {undocumented}"


def test_the_api_reference_names_the_documented_modules():
    text = API_PAGE.read_text()
    assert re.search(r"^::: jaxdbg\.engine\.breakpoint_state\s*$", text, flags=re.M)
    assert re.search(r"^::: jaxdbg\.extend\.register_subcommand\s*$", text, flags=re.M)


def test_the_extension_page_documents_every_name_of_jaxdbg_extend_at_that_path():
    """A plugin's names are documented where they stay: jaxdbg.extend, never an inner module."""
    import jaxdbg.extend

    text = API_PAGE.read_text()
    section = text[text.index("## Extending jaxdbg") :]
    documented = set(re.findall(r"^::: jaxdbg\.extend\.(\w+)\s*$", section, flags=re.M))
    assert documented == set(jaxdbg.extend.__all__)
    inner = re.findall(r"^::: (jaxdbg\.(?!extend\b)\S+)", section, flags=re.M)
    assert not inner, inner


def module_map() -> dict[str, set[str]]:
    """CONTRIBUTING.md's 'Where things live': folder -> the file names its row names."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Where things live") :]
    rows = {}
    for folder, cell in re.findall(r"^\| `([\w/]+/)` \| (.*) \|$", section, flags=re.M):
        rows[folder.rstrip("/")] = set(re.findall(r"`([\w]+\.(?:py|js|css))`", cell))
    return rows


def test_the_module_map_matches_the_tree():
    """CONTRIBUTING.md's module map has a row per folder of both packages, and each row
    names exactly that folder's modules (and static files): none missing, none gone."""
    tree: dict[str, set[str]] = {}
    for package in ("jaxdbg", "jaxdbg_widgets"):
        for path in (ROOT / package).rglob("*"):
            if path.suffix in (".py", ".js", ".css") and "__pycache__" not in path.parts:
                if path.name == "__init__.py" and path.parent.name != "jaxdbg":
                    continue
                tree.setdefault(str(path.parent.relative_to(ROOT)), set()).add(path.name)
    mapped = module_map()
    assert set(mapped) == set(tree), (sorted(set(tree) - set(mapped)), sorted(set(mapped) - set(tree)))
    wrong = {
        folder: (sorted(tree[folder] - mapped[folder]), sorted(mapped[folder] - tree[folder]))
        for folder in tree
        if tree[folder] != mapped[folder]
    }
    assert not wrong, f"CONTRIBUTING.md's 'Where things live' (missing, gone): {wrong}"
