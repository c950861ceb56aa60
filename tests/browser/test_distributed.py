"""A profile merged from two Dask workers, in the dashboard in JupyterLab (Debian's Chromium).

The notebook starts a LocalCluster(n_workers=2, processes=True), profiles eight shards of a
small model with ``everyo.distributed.profile_tasks`` (shard 5 is a planted straggler) and shows
the merged run with ``everyo_lab.Dashboard(run)``. Checked: the flame chart draws, with one band
of lanes per worker, named after the worker. The screenshot ``test-artifacts/
distributed-dashboard.png`` is the one docs/distributed.md shows.
"""

from __future__ import annotations

import re

import pytest
from harness import BrowserSession, missing, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if missing():
    pytest.skip(missing(), allow_module_level=True)
pytest.importorskip("distributed")

NOTEBOOK = "distributed.ipynb"
CELLS = [
    """%load_ext everyo_lab
import everyo as eo
import everyo.profiler as ep
import everyo_lab
from distributed import Client, LocalCluster
from everyo.distributed import profile_tasks

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
client = Client(cluster)
client.wait_for_workers(2)""",
    """model = eo.Sequential(eo.Linear(64, 256, seed=0), eo.ReLU(), eo.Linear(256, 10, seed=1))

def shard(i):
    for _ in range(200 if i == 5 else 20):  # shard 5 does 10x the work: a straggler
        with ep.record_function("batch"):
            model(eo.ones(256, 64))

run = profile_tasks(client, shard, range(8), label="8 shards on 2 workers")
print("stragglers:", [t.index for t in run.stragglers])
everyo_lab.Dashboard(run)""",
    "client.close(); cluster.close()",
]
SETUP, PROFILE, CLOSE = 0, 1, 2

# The flame chart's lane bands: the y axis labels of cell i (one per thread band).
BANDS_JS = """i => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const gd = cell && cell.querySelector('.everyo-dashboard .everyo-flame.js-plotly-plot');
  if (!gd || !gd.layout || !gd.layout.yaxis) return null;
  return gd.layout.yaxis.ticktext || [];
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("distributed")
    write_notebook(root / NOTEBOOK, CELLS)
    with BrowserSession(root, app="lab") as s:
        try:
            s.open(NOTEBOOK)
            for i in (SETUP, PROFILE):
                s.run_cell(i)
                s.wait_prompt(i, timeout_ms=240000)
            yield s
        except BaseException:
            s.page_screenshot("distributed-failure")
            raise
        finally:  # stop the cluster's worker processes with the kernel's help
            try:
                s.run_cell(CLOSE)
                s.wait_prompt(CLOSE, timeout_ms=60000)
            except Exception:  # noqa: BLE001 - the server's shutdown ends the kernel anyway
                pass


def test_the_merged_run_shows_one_band_per_worker(lab):
    s = lab
    s.page.wait_for_function(
        "i => { const b = window.__everyoBoard(i); return b && b.bars > 0 && b.yrange; }",
        arg=PROFILE,
        timeout=60000,
    )
    output = s.cell(PROFILE).locator(".jp-OutputArea").inner_text()
    found = re.search(r"stragglers: \[([\d, ]*)\]", output)
    assert found and "5" in found.group(1).split(", "), output
    s.page.wait_for_function(f"i => (({BANDS_JS})(i) || []).length >= 2", arg=PROFILE)
    bands = s.page.evaluate(BANDS_JS, PROFILE)
    assert sorted(bands) == ["worker 0", "worker 1"], bands
    s.screenshot(s.cell(PROFILE).locator(".everyo-dashboard"), "distributed-dashboard")
