"""The notebooks run top to bottom (nbclient, real kernel, real service) and are stored without outputs."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import DATA

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["01_quickstart.ipynb", "02_quality.ipynb"])
def test_stored_without_outputs(name):
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "images"), [("01_quickstart.ipynb", 1), ("02_quality.ipynb", 3)])
def test_executes_with_plots(name, images, monkeypatch):
    monkeypatch.setenv("EMS_DEV_DATA", str(DATA))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(book, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()  # raises on any cell error
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= images
    text = "".join(o.get("text", "") for o in outputs)
    if name == "01_quickstart.ipynb":
        assert "episodes, index" in text and "failure risk" in text
    else:
        assert '"auc_t5"' in text
    assert os.environ["EMS_DEV_DATA"] == str(DATA)
