"""The lazy top-level API: every advertised name resolves; deprecated names warn."""

import subprocess
import sys

import pytest

import mlsys


def test_import_is_lazy():
    # Importing mlsys must not build the unit registry or load pydantic models.
    code = (
        "import sys, mlsys; "
        "print(int('pint' in sys.modules), int('pydantic' in sys.modules), "
        "int('numpy' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0", "0"]


@pytest.mark.parametrize(
    "name",
    [
        "ureg",
        "Q_",
        "Hardware",
        "Models",
        "Accelerator",
        "Fleet",
        "TransformerWorkload",
        "MlsysError",
        "UnknownEntryError",
    ],
)
def test_foundation_names_resolve(name):
    assert getattr(mlsys, name) is not None


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="NoSuchModel"):
        mlsys.NoSuchModel


def test_version():
    assert mlsys.__version__.count(".") == 2
