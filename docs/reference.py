"""The Sphinx extension of fpgacomm's reference: two directives that write
their pages from the code itself, so that the reference cannot fall behind it.

- ``fpgacomm-api``: an autodoc section for every public module of the
  installed package (pkgutil's walk; a module or package whose name starts
  with an underscore is private, and so is the compiled core);
- ``fpgacomm-cli``: the --help text of the ``fpgacomm`` command and of each
  of its commands and their subcommands, from the argparse parsers
  (fpgacomm.cli.command.build_parser).
"""

from __future__ import annotations

import argparse
import os
import pkgutil

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

# The width --help is written at on the page.
HELP_COLUMNS = 100


def public_modules() -> list[str]:
    """Every public module of the fpgacomm package, by dotted name, in walk order."""
    import fpgacomm

    names = ["fpgacomm"]
    for module in pkgutil.walk_packages(fpgacomm.__path__, "fpgacomm."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            names.append(module.name)
    return names


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """(command line, parser) of `fpgacomm` and every command and subcommand under it, depth first."""
    from fpgacomm.cli.command import build_parser

    found = []

    def walk(prog: str, parser: argparse.ArgumentParser) -> None:
        found.append((prog, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    if child.prog.endswith(f" {name}"):  # an alias names the same parser twice
                        walk(f"{prog} {name}", child)

    walk("fpgacomm", build_parser())
    return found


class _Generated(SphinxDirective):
    """A directive whose content is reStructuredText written by `text()`."""

    def text(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(self.text(), source="fpgacomm reference"), container)
        return container.children


class ApiDirective(_Generated):
    def text(self) -> list[str]:
        lines = []
        for name in public_modules():
            lines += [name, "-" * len(name), "", f".. automodule:: {name}", ""]
        return lines


class CliDirective(_Generated):
    def text(self) -> list[str]:
        previous = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = str(HELP_COLUMNS)  # argparse's width
        try:
            lines = []
            for prog, parser in parsers():
                lines += [prog, "-" * len(prog), "", ".. code-block:: text", ""]
                lines += [f"    {line}".rstrip() for line in parser.format_help().splitlines()] + [""]
            return lines
        finally:
            if previous is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = previous


def setup(app):
    app.add_directive("fpgacomm-api", ApiDirective)
    app.add_directive("fpgacomm-cli", CliDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
