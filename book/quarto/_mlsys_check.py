"""Quarto's pre-render hook: ``mlsys check`` on the files about to be rendered.

Quarto runs a ``.py`` hook with the Python it executes the chapters with
(``QUARTO_PYTHON``, else ``python3`` on PATH), so the check sees the same mlsys the
chapters import, with or without an activated virtual environment.
"""

import sys

try:
    from mlsys.cli import main
except ImportError:
    sys.exit(
        f"mlsys is not installed for {sys.executable}: activate the environment that has "
        "it (. .venv/bin/activate) or set QUARTO_PYTHON to its python, then render again."
    )

sys.exit(main(["check", *sys.argv[1:]]))
