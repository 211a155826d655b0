"""The fpgacomm command line: one module per command, each with a register()
that adds its parser and the function that calls the library; options.py
holds what every command shares."""

from .command import main  # noqa: F401  (the console script's entry point)
from .options import EXIT_TIMEOUT, EXIT_USAGE, EXIT_VALIDATION  # noqa: F401  (the command's exit statuses)
