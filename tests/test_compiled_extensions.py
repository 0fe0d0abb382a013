"""The compiled extensions: each is optional and loaded in one place
(:func:`motionkit._accel.compiled`), so an install without a C compiler takes the NumPy
or Python paths instead of failing on import."""

from __future__ import annotations

import re
import sys

import pytest

from conftest import REPO, require_compiled
from motionkit import _accel

#: The extension modules setup.py builds.
EXTENSIONS = re.findall(r'Extension\("([\w.]+)"', (REPO / "setup.py").read_text())


def test_setup_builds_every_c_source_of_the_package() -> None:
    sources = {str(path.relative_to(REPO / "src").with_suffix("")).replace("/", ".")
               for path in (REPO / "src" / "motionkit").rglob("*.c")}
    assert len(EXTENSIONS) >= 6 and set(EXTENSIONS) == sources


@pytest.mark.parametrize("name", EXTENSIONS)
def test_each_extension_is_loaded_through_the_one_loader(name: str) -> None:
    package, module = name.rsplit(".", 1)
    folder = REPO / "src" / package.replace(".", "/")
    callers = [path for path in folder.glob("*.py") if f'compiled("{name}")' in path.read_text()]
    assert len(callers) == 1, f"{name} should be loaded by one module of {package}"
    assert not any(re.search(rf"import {module}\b", path.read_text())
                   for path in folder.glob("*.py")), "loaded by hand as well"


@pytest.mark.parametrize("name", EXTENSIONS)
def test_an_extension_that_does_not_import_is_none(name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError
    assert _accel.compiled(name) is None


@pytest.mark.parametrize("name", EXTENSIONS)
def test_a_built_extension_is_the_module(name: str) -> None:
    module = _accel.compiled(name)
    require_compiled(module is not None, name)
    assert module is not None and module.__name__ == name
