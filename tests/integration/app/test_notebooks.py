"""The notebooks run top to bottom in a real Jupyter kernel, and are committed without outputs.

Each notebook runs with nbclient in a fresh kernel on this interpreter (the venv's Python, through
a kernelspec written for the test, so no user-installed kernel is picked up), offline, from an
empty working directory and with ``TMPDIR`` inside the test's own temporary directory: the
notebooks keep their state under ``tempfile``, so nothing lands in the repository. The
assertions read what a reader would see: the cells' printed and displayed outputs.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from tools.notebooks_strip import STRIP_COMMAND, unstripped_cells

NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"
NAMES = (
    "01_quickstart.ipynb",
    "02_knowledge_graph.ipynb",
    "03_eval_report.ipynb",
    "04_project_memory.ipynb",
    "05_team_code.ipynb",
)
KERNEL = "apiatlas-notebook-test"
CELL_TIMEOUT_S = 120
"""Per cell; the longest (the eval run) takes about 15 s on a laptop."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
MEMORY_ID = re.compile(r"\bmem_[0-9a-f]{12}\b")


@dataclass
class Executed:
    """An executed notebook, its outputs read by cell id."""

    cells: dict[str, nbformat.NotebookNode]
    tmp: Path
    """What the kernel had as ``TMPDIR``."""

    def text(self, cell_id: str) -> str:
        """Everything the cell printed or displayed as text or Markdown."""
        parts = []
        for output in self.cells[cell_id].outputs:
            if output.output_type == "stream" and output.name == "stdout":
                parts.append(output.text)
            elif output.output_type in ("execute_result", "display_data"):
                data = output.data
                parts.append(data.get("text/markdown") or data.get("text/plain", ""))
        return "".join(parts)

    def lines(self, cell_id: str) -> list[str]:
        """The cell's text output, line by line."""
        return self.text(cell_id).splitlines()

    def images(self, cell_id: str) -> list[str]:
        """The PNG images the cell displayed (base64)."""
        return [
            o.data["image/png"]
            for o in self.cells[cell_id].outputs
            if o.output_type in ("execute_result", "display_data") and "image/png" in o.data
        ]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> KernelSpecManager:
    """Only a kernelspec that runs ``sys.executable -m ipykernel_launcher``."""
    folder = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(folder / KERNEL, overrides={"display_name": "apiatlas tests"})
    return KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)


def execute(name: str, tmp_path: Path, kernels: KernelSpecManager) -> Executed:
    """Run the notebook ``name`` in a fresh kernel; raise on the first failing cell."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=kernels)
    client = NotebookClient(
        notebook,
        km=km,
        timeout=CELL_TIMEOUT_S,
        startup_timeout=60,
        resources={"metadata": {"path": str(cwd)}},
    )
    try:
        client.execute(env={**os.environ, **OFFLINE, "TMPDIR": str(tmp)})
    finally:
        # nbclient leaves a kernel it was given running: stop it, or every test leaks one.
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    assert not km.is_alive()
    # The notebooks write under tempfile only: nothing in the working directory.
    assert list(cwd.iterdir()) == []
    assert list(tmp.glob("apiatlas-notebook-*")), "the notebook kept no state under TMPDIR"
    return Executed({cell.id: cell for cell in notebook.cells}, tmp)


def test_the_five_notebooks() -> None:
    assert tuple(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name: str) -> None:
    notebook = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    problems = unstripped_cells(notebook)
    assert not problems, (
        f"{name} is committed with results ({'; '.join(problems)}): run `{STRIP_COMMAND}`"
    )


def test_the_kernel_is_this_python(kernels: KernelSpecManager) -> None:
    assert kernels.get_kernel_spec(KERNEL).argv[:3] == [sys.executable, "-m", "ipykernel_launcher"]


def test_quickstart(tmp_path: Path, kernels: KernelSpecManager) -> None:
    run = execute("01_quickstart.ipynb", tmp_path, kernels)
    assert "POST /v2/locations" in run.text("ask")  # the answer, rendered as Markdown
    structured = run.lines("structured")
    assert "knowledge_graph" in structured[0]  # the route
    assert structured[1] == "primary POST /v2/locations [1]"
    assert run.lines("citations")[0] == "[1] spec: POST /v2/locations"
    assert run.lines("resolve") == [
        "every citation resolves: True",
        "POST /v2/locations is createLocation - Create a location",
    ]
    prerequisites = run.lines("prereq")
    assert prerequisites[0] == "primary POST /v2/shipments"
    assert "prerequisite POST /v2/locations" in prerequisites
    assert "prerequisite POST /v2/carriers" in prerequisites
    assert run.lines("missing")[0] == "outcome: none abstained: True"


def test_knowledge_graph(tmp_path: Path, kernels: KernelSpecManager) -> None:
    run = execute("02_knowledge_graph.ipynb", tmp_path, kernels)
    resources = {line.split()[0]: line for line in run.lines("resources")}
    assert "warehouse" in resources["location"] and "courier" in resources["carrier"]
    assert "create  POST /v1/locations (deprecated)" in run.lines("location")
    found = run.lines("search")  # "warehouse" is an alias: it finds location endpoints only
    assert len(found) == 5 and all("/locations" in line for line in found)
    trail = run.lines("trail")
    assert trail[0] == (
        "depth 1: POST /v2/shipments/{shipment_id}/cancel needs shipment_id from POST /v2/shipments"
    )
    assert "depth 2: POST /v2/shipments needs carrier_id from POST /v2/carriers" in trail
    hood = run.lines("hood")
    assert "Endpoint       POST /v2/shipments/{shipment_id}/cancel" in hood
    assert "DocSection     Cancelling a shipment" in hood
    labels = {line.split()[0] for line in hood}
    assert {"Resource", "Parameter", "Schema", "OperationKind"} <= labels
    assert len(run.images("draw")) == 1


def test_eval_report(tmp_path: Path, kernels: KernelSpecManager) -> None:
    run = execute("03_eval_report.ipynb", tmp_path, kernels)
    assert re.match(r"sample \(dev\): \d+ cases, \d+ unanswerable$", run.lines("dataset")[0])
    [report] = run.tmp.glob("apiatlas-notebook-*/eval/report.json")
    results = json.loads(report.read_text(encoding="utf-8"))["results"]["sample"]
    assert list(results) == ["dense", "kg", "agent"]
    table = run.text("table")
    assert table.startswith("| strategy | top1 | recall@5 |")
    agent_row = next(line for line in table.splitlines() if line.startswith("| agent |"))
    assert f"| {results['agent']['top1']:.2f} |" in agent_row
    assert len(run.images("plot")) == 1
    assert run.lines("cases")[0].startswith("the agent missed ")


def test_project_memory(tmp_path: Path, kernels: KernelSpecManager) -> None:
    run = execute("04_project_memory.ipynb", tmp_path, kernels)
    assert run.lines("before")[0] == "primary POST /v2/locations"
    [decision] = MEMORY_ID.findall(run.text("remember"))

    assert f"memory:{decision}" in run.text("after")  # the rendered answer cites it
    after = run.lines("after-data")
    assert after[0] == "primary POST /v1/locations"
    assert f"first citation: memory:{decision}" in after
    assert any("disagrees with the docs:" in line and "deprecated" in line for line in after)

    old, new = run.lines("supersede")  # the history, oldest version first
    update = new.split()[0]
    assert old.startswith(f"{decision} closed at 20") and old.endswith(f"superseded by {update}")
    assert new == f"{update} closed at None superseded by None"
    latest = run.lines("latest")
    assert latest[0] == "primary POST /v2/locations"
    assert "primary POST /v1/locations" not in latest
    assert f"first citation: memory:{update}" in latest
    assert any("forbids" in line for line in latest)

    then = run.lines("at")
    assert then[0] == f"in force then: ['{decision}']"
    assert then[1] == "primary POST /v1/locations"
    assert f"first citation: memory:{decision}" in then
    assert run.lines("origin") == ["POST /v2/locations", "memories cited: []"]


def test_team_code(tmp_path: Path, kernels: KernelSpecManager) -> None:
    run = execute("05_team_code.ipynb", tmp_path, kernels)
    assert run.lines("ingest") == ["3 code files, 8 code sites"]
    report = run.text("report")
    assert "8 sites in 3 files" in report and "## Deprecated endpoints in use" in report
    assert run.lines("sites")[0] == "shipping/client.py:15 POST /v2/locations http"
    assert run.text("where").startswith("**In your code**")
    assert "shipping/client.py:15" in run.text("where")
    deprecated = run.text("deprecated")
    assert deprecated.startswith("memory -> analyse -> code")
    assert "use `GET /v2/locations/{location_id}` instead" in deprecated
    assert "`POST /v2/quotes`" in run.text("file") and "/v2/invoices" in run.text("unknown")
    assert "CodeSite      shipping/client.py:25" in run.lines("hood")
    assert len(run.images("hood")) == 1
