"""``kubesched trace sweep``: the grid of trace replays (pod lists × policies × seeds) on all cores,
or on a Ray cluster, resumable, as one tidy table.

Each cell (one pod list, one policy, one seed) is an independent replay of
:func:`kubesched.sim.trace.replay_trace`; its rows (one per arrived level) are written to
``OUT/cells/<cell>.json`` as soon as it finishes, by an atomic rename, so an interrupted sweep
resumes where it stopped: cells whose file exists are not run again (their key includes the node
list, the pod list's content hash, the tune and the engine, so a changed input is a new cell).
When every cell is done the rows go to ``OUT/sweep.csv`` and ``OUT/sweep.parquet`` (columns:
trace, policy, seed, arrived, allocation, fragmentation, failed_pods, seconds) and the report to
``OUT/sweep.html``.

Executors: ``process`` (a ``ProcessPoolExecutor`` over the machine's cores, the default) and
``ray`` (``ray`` from PyPI, the ``kubesched[ray]`` extra: tasks on the cluster ``ray.init``
connects to, a local one when none is configured), so a grid of a thousand runs scales past one
machine. Both run the same function on the same inputs.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["COLUMNS", "Cell", "SweepError", "cells_of", "run_cell", "run_sweep", "sweep_bounds", "write_table"]

#: The tidy table's columns, in order.
COLUMNS = ("trace", "policy", "seed", "arrived", "allocation", "fragmentation", "failed_pods", "seconds")
EXECUTORS = ("process", "ray")


class SweepError(ValueError):
    """A sweep that cannot run: a missing optional dependency, an unusable output directory."""


@dataclass(frozen=True)
class Cell:
    nodes_csv: str
    pods_csv: str
    policy: str
    seed: int
    tune: float
    standalone: bool
    #: The pod list's content hash (a changed file is a new cell).
    digest: str

    @property
    def trace(self) -> str:
        return Path(self.pods_csv).stem

    @property
    def key(self) -> str:
        engine = "standalone" if self.standalone else "framework"
        return f"{self.trace}__{self.policy}__{self.seed}__t{self.tune:g}__{engine}__{self.digest[:12]}"


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cells_of(
    nodes_csv: str,
    pods_csvs: Sequence[str],
    policies: Sequence[str],
    seeds: Sequence[int],
    tune: float,
    standalone: bool = False,
) -> list[Cell]:
    """Every cell of the grid, pod list by pod list, policy by policy, seed by seed."""
    digests = {p: _digest(p) for p in pods_csvs}
    return [
        Cell(str(nodes_csv), str(p), policy, seed, tune, standalone, digests[p])
        for p in pods_csvs
        for policy in policies
        for seed in seeds
    ]


def run_cell(cell: Cell) -> list[dict[str, Any]]:
    """One replay: a row per arrived level (10..130 %). Runs in a worker process (or Ray task)."""
    from kubesched.sim import trace as tr
    from kubesched.sim.alibaba import arrival, load_trace
    from kubesched.sim.gpu_replay import replay_arrival

    data = load_trace(cell.nodes_csv, cell.pods_csv)
    if cell.standalone:
        result = replay_arrival(arrival(data, cell.seed, cell.tune), cell.policy)
    else:
        result = tr.replay_trace(data, cell.policy, cell.seed, cell.tune, typical_pods=tr.typical_pod_args(data))
    summary = tr.summary(result, len(data.nodes))
    return [
        {
            "trace": cell.trace,
            "policy": summary["policy"],
            "seed": cell.seed,
            "arrived": int(level),
            "allocation": summary["allocation"][level],
            "fragmentation": summary["fragmentation"][level],
            "failed_pods": summary["failed_pods"],
            "seconds": summary["seconds"],
        }
        for level in summary["allocation"]
    ]


def _cell_file(out: Path, cell: Cell) -> Path:
    return out / "cells" / f"{cell.key}.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


@dataclass
class SweepResult:
    rows: list[dict[str, Any]]
    ran: int
    skipped: int


def run_sweep(
    cells: Sequence[Cell],
    out: Path,
    *,
    executor: str = "process",
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Run the cells not done yet in ``out``; return every cell's rows (done before or now)."""
    if executor not in EXECUTORS:
        raise SweepError(f"--executor: {executor!r}; one of {', '.join(EXECUTORS)}")
    out.mkdir(parents=True, exist_ok=True)
    todo = [c for c in cells if not _cell_file(out, c).is_file()]
    done = len(cells) - len(todo)
    if progress is not None:
        progress(done, len(cells))
    for cell, cell_rows in _execute(todo, executor, workers):
        _write_atomic(_cell_file(out, cell), json.dumps({"cell": asdict(cell), "rows": cell_rows}))
        done += 1
        if progress is not None:
            progress(done, len(cells))
    rows: list[dict[str, Any]] = []
    for cell in cells:
        rows.extend(json.loads(_cell_file(out, cell).read_text("utf-8"))["rows"])
    return SweepResult(rows, ran=len(todo), skipped=len(cells) - len(todo))


def _execute(cells: Sequence[Cell], executor: str, workers: int | None) -> Iterable[tuple[Cell, list[dict[str, Any]]]]:
    if not cells:
        return
    if executor == "ray":
        yield from _execute_ray(cells)
        return
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        futures = {pool.submit(run_cell, c): c for c in cells}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def _execute_ray(cells: Sequence[Cell]) -> Iterable[tuple[Cell, list[dict[str, Any]]]]:
    try:
        import ray
    except ImportError as err:
        raise SweepError("--executor ray needs Ray: pip install 'kubesched[ray]'") from err
    started = not ray.is_initialized()
    if started:
        ray.init(ignore_reinit_error=True, log_to_driver=False)
    try:
        remote = ray.remote(run_cell)
        refs = {remote.remote(c): c for c in cells}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield refs[ref], ray.get(ref)
    finally:
        if started:
            ray.shutdown()


def sweep_bounds(
    nodes_csv: str, pods_csvs: Sequence[str], seeds: Sequence[int], tune: float, out: Path
) -> dict[str, dict[int, float]]:
    """``--bound``: each pod list's upper bound (``trace bound``, mean over ``seeds``) per arrived
    level, kept in ``OUT/bounds/`` (keyed like the cells, by content hash, tune and seeds) so a
    resumed sweep does not solve it again."""
    from kubesched.sim.alibaba import load_trace
    from kubesched.sim.trace_bound import bounds

    found: dict[str, dict[int, float]] = {}
    seeds_key = hashlib.sha256(",".join(map(str, seeds)).encode()).hexdigest()[:12]
    for pods_csv in pods_csvs:
        trace = Path(pods_csv).stem
        path = out / "bounds" / f"{trace}__t{tune:g}__{_digest(pods_csv)[:12]}__{seeds_key}.json"
        if not path.is_file():
            result = bounds(load_trace(nodes_csv, pods_csv), seeds, tune)
            _write_atomic(path, json.dumps(result))
        mean = json.loads(path.read_text("utf-8"))["bound"]
        found[trace] = {int(k): float(v) for k, v in mean.items() if v is not None}
    return found


def write_table(rows: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    """``sweep.csv`` and ``sweep.parquet`` (pyarrow, the ``kubesched[sweep]`` extra)."""
    csv_path = out / "sweep.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:
        raise SweepError("the Parquet table needs pyarrow: pip install 'kubesched[sweep]'") from err
    table = pa.Table.from_pylist(
        list(rows),
        schema=pa.schema(
            [
                ("trace", pa.string()),
                ("policy", pa.string()),
                ("seed", pa.int64()),
                ("arrived", pa.int64()),
                ("allocation", pa.float64()),
                ("fragmentation", pa.float64()),
                ("failed_pods", pa.int64()),
                ("seconds", pa.float64()),
            ]
        ),
    )
    parquet_path = out / "sweep.parquet"
    pq.write_table(table, parquet_path)
    return [csv_path, parquet_path]
