"""A file of the project's ``scripts/`` folder loaded as a module, for the tests of those scripts (they are run
as files, not installed): ``load_script("gpu_trace")``."""
from __future__ import annotations

import importlib.util
import pathlib

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
