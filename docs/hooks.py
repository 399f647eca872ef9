"""MkDocs hook: adds the generated reference pages (docs/gen_reference.py,
docs/gen_api_reference.py) to the site."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_api_reference
import gen_reference
from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    pages = {
        gen_reference.CONFIGURATION_PAGE: gen_reference.configuration_reference(),
        gen_reference.RESULTS_COLUMNS_PAGE: gen_reference.results_columns_reference(),
        gen_api_reference.API_PAGE: gen_api_reference.api_reference(),
    }
    for path, text in pages.items():
        files.append(File.generated(config, path, content=text))
    return files
