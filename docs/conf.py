"""Sphinx configuration of fpgacomm's rendered reference (`make docs`).

The Markdown pages (METHODS, FABRIC, ARCHITECTURE, ...) go through
myst-parser; the Python API is autodoc's, module by module (reference.py
lists every module of the installed package, so a new module joins by
existing); the command-line reference is written from the argparse parsers
themselves. Docstrings follow one convention: PEP 257 prose in
reStructuredText, names in ``double backquotes`` or `single` ones.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # reference.py, the extension beside this file

import fpgacomm  # noqa: E402  (the installed package the reference documents)

project = "fpgacomm"
release = version = fpgacomm.__version__
extensions = ["sphinx.ext.autodoc", "myst_parser", "reference"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"fpgacomm {release}"
# Module docstrings come first, then members in source order, as the code reads;
# a member without a docstring is listed all the same (its signature).
autodoc_member_order = "bysource"
# Each object once, in the module that defines it: the package root's __all__
# (Result, load, compare, ...) names objects documented in their homes.
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_typehints = "description"
# Markdown headings become link targets (docs/SLURM.md#srun), as GitHub renders them.
myst_heading_anchors = 3
# Links between the pages and into the repository stay as written: the
# repository's files (scripts/, tests/) are not pages.
suppress_warnings = ["myst.xref_missing"]
