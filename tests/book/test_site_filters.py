"""The site's Quarto filters resolve to what they name when the site renders in place.

Quarto reads a filter entry that is a path (or a bare name that matches a file or
directory next to the page's project) as that file, and only otherwise as an extension's
name. The repository root holds the ``mlsys/`` package, so the hover-provenance filter,
listed as the extension ``mlsys``, was run as the package directory from the pages under
``docs/guide`` (``quarto render`` at the root failed there; the render tests, which copy
the site without the package, did not see it)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_every_site_filter_is_an_existing_file_or_an_unshadowed_extension():
    cfg = yaml.safe_load((ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    for entry in cfg["filters"]:
        name = entry if isinstance(entry, str) else entry.get("path", "")
        if name.endswith(".lua") or "/" in name:
            assert (ROOT / name).is_file(), name
        else:  # an extension by name: nothing at the root may shadow it
            assert not (ROOT / name).exists(), f"{name} names a path at the root, not the extension"
            assert (ROOT / "_extensions" / name / "_extension.yml").is_file(), name
