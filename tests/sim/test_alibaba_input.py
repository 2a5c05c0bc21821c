"""Bad and unusual Alibaba trace CSVs (issue 11): every published list loads, anything else is refused
with ``FILE:LINE: column "...": ...`` lines, and nothing blocks, hangs or grows without bound.

Expected counts and rows come from the trace's own documentation: ../shared/data/alibaba-gpu-v2023/
PROVENANCE.md (lines per file) and README.md (its sample rows). Layouts with fewer columns are the
published ``openb_pod_list_multigpu*.csv`` (name, cpu_milli, memory_mib, num_gpu, gpu_milli) and
hkust-adsl/kubernetes-scheduler-simulator ``data/csv/openb_pod_list_nomem.csv`` (no memory_mib); what
is left out gets the value ``data/pod_csv_to_yaml.py`` gives it. Name and label-value messages are
upstream's, from staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (v1.35).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.sim import alibaba
from kubesched.sim.alibaba import NodeRecord, PodRecord, TraceError

DATA = Path(os.environ.get("KUBESCHED_ALIBABA_TRACE")
            or Path(__file__).resolve().parents[3] / "shared" / "data" / "alibaba-gpu-v2023")

#: The published files present in the data folder and their rows (PROVENANCE.md: lines - 1 header).
PUBLISHED = {
    "openb_node_list_all_node.csv": 1523,
    "openb_node_list_gpu_node.csv": 1213,
    "openb_pod_list_cpu0.csv": 7064,
    "openb_pod_list_cpu037.csv": 7336,
    "openb_pod_list_cpu050.csv": 7439,
    "openb_pod_list_cpu072.csv": 7608,
    "openb_pod_list_cpu100.csv": 7853,
    "openb_pod_list_cpu200.csv": 8832,
    "openb_pod_list_cpu235.csv": 9240,
    "openb_pod_list_cpu250.csv": 9420,
    "openb_pod_list_cpu300.csv": 10094,
    "openb_pod_list_default.csv": 8152,
    "openb_pod_list_gpuspec05.csv": 8152,
    "openb_pod_list_gpuspec10.csv": 8152,
    "openb_pod_list_gpuspec20.csv": 8152,
    "openb_pod_list_gpuspec25.csv": 8152,
    "openb_pod_list_gpuspec33.csv": 8152,
}

POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
              "scheduled_time\n")
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
DNS1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
           "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def _published(name: str) -> Path:
    if not DATA.is_dir():
        pytest.skip(f"the Alibaba trace folder {DATA} is not here (set KUBESCHED_ALIBABA_TRACE)")
    path = DATA / name
    assert path.is_file(), f"{name} is missing from {DATA}"
    return path


@pytest.mark.parametrize(("name", "rows"), sorted(PUBLISHED.items()))
def test_every_published_list_loads(name: str, rows: int) -> None:
    path = _published(name)
    records = alibaba.read_nodes(path) if "_node_" in name else alibaba.read_pods(path)
    assert len(records) == rows


def test_no_csv_of_the_data_folder_goes_untested() -> None:
    if not DATA.is_dir():
        pytest.skip(f"the Alibaba trace folder {DATA} is not here")
    assert sorted(p.name for p in DATA.glob("*.csv")) == sorted(PUBLISHED)


def test_the_readme_sample_rows() -> None:
    nodes = {n.name: n for n in alibaba.read_nodes(_published("openb_node_list_all_node.csv"))}
    assert nodes["openb-node-0227"] == NodeRecord("openb-node-0227", 32000, 262144, 0, "")
    assert nodes["openb-node-0228"] == NodeRecord("openb-node-0228", 128000, 786432, 8, "G3")
    assert nodes["openb-node-0229"] == NodeRecord("openb-node-0229", 96000, 786432, 8, "V100M32")
    pods = {p.name: p for p in alibaba.read_pods(_published("openb_pod_list_default.csv"))}
    assert pods["openb-pod-0017"] == PodRecord("openb-pod-0017", 88000, 327680, 8, 1000, (), "Burstable",
                                               "Succeeded", 9437497, 10769854, 9437497)
    assert pods["openb-pod-0022"] == PodRecord("openb-pod-0022", 4000, 15258, 1, 220, (), "BE", "Running",
                                               9679175, 9973826, 9679175)


# ---- other layouts -------------------------------------------------------------------------------


def _write(tmp_path: Path, text: str | bytes, name: str = "pods.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_multigpu_layout_gets_the_documented_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,88000,327680,8,1000\n")
    assert alibaba.read_pods(path) == [PodRecord("openb-pod-0000", 88000, 327680, 8, 1000, (), "", "", None, None,
                                                 None)]


def test_nomem_layout_requests_no_memory(tmp_path: Path) -> None:
    path = _write(tmp_path, "name,cpu_milli,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                            "scheduled_time\nopenb-pod-0061,11908,1,1000,,BE,Pending,10001278,10001403,\n")
    (pod,) = alibaba.read_pods(path)
    assert (pod.memory_mib, pod.qos, pod.pod_phase, pod.creation_time, pod.scheduled_time) == (
        0, "BE", "Pending", 10001278, None)
    assert alibaba.pod_manifest(pod)["spec"]["containers"][0]["resources"]["requests"]["memory"] == "0Mi"


def test_columns_in_any_order_pandas_floats_nan_and_a_bom(tmp_path: Path) -> None:
    # What a CSV re-saved by pandas or a spreadsheet looks like: floats for ints, "nan" for empty
    # text, a byte order mark, CRLF line ends and a blank last line.
    text = ("\ufeffgpu_milli,num_gpu,name,cpu_milli,memory_mib,gpu_spec\r\n"
            "460.0,1.0,p-0,6000,1.2288e4,nan\r\n1000,2,p-1,8000,8192,V100M16|nan|V100M32\r\n\r\n")
    assert alibaba.read_pods(_write(tmp_path, text.encode())) == [
        PodRecord("p-0", 6000, 12288, 1, 460), PodRecord("p-1", 8000, 8192, 2, 1000, ("V100M16", "V100M32"))]


# ---- refused cells, rows and headers -------------------------------------------------------------

POD_ROW = "p-1,1000,1024,1,500,,LS,Running,0,10,0\n"

CELL_CASES = [
    # (cells to replace in POD_ROW, message after "FILE:3: ")
    ({"cpu_milli": "abc"}, 'column "cpu_milli": "abc" is not a number'),
    ({"cpu_milli": "1e400"}, 'column "cpu_milli": "1e400" is not in 0..1000000000'),
    ({"cpu_milli": "99999999999999999999999"}, 'column "cpu_milli": "99999999999999999999999" is not in 0..1000000000'),
    ({"cpu_milli": "nan"}, 'column "cpu_milli": "nan" is not a finite number'),
    ({"memory_mib": "inf"}, 'column "memory_mib": "inf" is not a finite number'),
    ({"memory_mib": "-Infinity"}, 'column "memory_mib": "-Infinity" is not a finite number'),
    ({"memory_mib": "-1"}, 'column "memory_mib": "-1" is not in 0..1073741824'),
    ({"num_gpu": "65"}, 'column "num_gpu": "65" is not in 0..64'),
    ({"num_gpu": "0.5"}, 'column "num_gpu": "0.5" is not a whole number'),
    ({"gpu_milli": ""}, 'column "gpu_milli": empty, a number is required'),
    ({"gpu_milli": "0x10"}, 'column "gpu_milli": "0x10" is not a number'),
    ({"creation_time": "yesterday"}, 'column "creation_time": "yesterday" is not a number'),
    ({"num_gpu": "2"}, 'column "gpu_milli": 500 milli is a share of one GPU, but num_gpu is 2'),
    ({"name": "Pod_1"}, f'column "name": "Pod_1": {DNS1123}'),
    ({"name": "p-0"}, 'column "name": "p-0" is already on line 2'),
    ({"gpu_spec": "V100 M16"}, f'column "gpu_spec": "V100 M16": {LABEL_VALUE}'),
]
COLUMNS = POD_HEADER.strip().split(",")


@pytest.mark.parametrize(("cells", "message"), CELL_CASES, ids=[m for _, m in CELL_CASES])
def test_a_bad_cell_names_file_line_and_column(tmp_path: Path, cells: dict[str, str], message: str) -> None:
    values = dict(zip(COLUMNS, POD_ROW.strip().split(","), strict=True)) | cells
    path = _write(tmp_path, POD_HEADER + POD_ROW.replace("p-1", "p-0") + ",".join(values.values()) + "\n")
    with pytest.raises(TraceError) as info:
        alibaba.read_pods(path)
    assert info.value.errors == [f"{path}:3: {message}"]


def test_every_problem_of_a_file_is_listed_then_the_list_stops(tmp_path: Path) -> None:
    bad = "".join(f"p-{i},abc,1,1,1\n" for i in range(30))
    path = _write(tmp_path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-x,1,1,1,1\n" + bad)
    with pytest.raises(TraceError) as info:
        alibaba.read_pods(path)
    assert info.value.errors == [f'{path}:{i + 3}: column "cpu_milli": "abc" is not a number' for i in range(20)] + [
        f"{path}: stopped after 20 problems"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "{p}: empty file: no header line (required columns: name, cpu_milli, num_gpu, gpu_milli)"),
        ("\n\n", "{p}: empty file: no header line (required columns: name, cpu_milli, num_gpu, gpu_milli)"),
        (POD_HEADER, "{p}:1: only a header line: the pod list has no rows"),
        ("name,cpu_milli,memory_mib\np,1,1\n", '{p}:1: missing columns "num_gpu", "gpu_milli" '
                                               "(required: name, cpu_milli, num_gpu, gpu_milli)"),
        ("name,cpu_milli,num_gpu,gpu_milli,cpu\np,1,1,1,1\n",
         '{p}:1: unknown column "cpu"; a pod list has the columns name, cpu_milli, memory_mib, num_gpu, gpu_milli, '
         "gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time"),
        ("name,cpu_milli,num_gpu,gpu_milli,name\np,1,1,1,q\n", '{p}:1: column "name" appears 2 times in the header'),
        ("name,cpu_milli,num_gpu,gpu_milli\np,1,1\n", "{p}:2: 3 cells, but the header has 4 columns"),
        ('name,cpu_milli,num_gpu,gpu_milli,qos\np,1,1,1,"L\nS"\nq,x,1,1,LS\n',
         '{p}:4: column "cpu_milli": "x" is not a number'),
        ('name,cpu_milli,num_gpu,gpu_milli\n"p"q,1,1,1\n', "{p}:2: not valid CSV: ',' expected after '\"'"),
        (b"name,cpu_milli,num_gpu,gpu_milli\np,1,1,1\nq\xff,1,1,1\n",
         "{p}:3:2: not valid UTF-8: byte 0xff at offset 42"),
        ("name,cpu_milli,num_gpu,gpu_milli\n" + "p" * 200_000 + ",1,1,1\n",
         "{p}:2: not valid CSV: field larger than field limit (131072)"),
    ],
    ids=["empty", "blank-lines", "header-only", "missing", "unknown", "repeated", "cells", "multiline-record",
         "bad-quote", "not-utf8", "huge-field"],
)
def test_a_bad_file_is_refused_with_its_line(tmp_path: Path, text: str | bytes, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(TraceError) as info:
        alibaba.read_pods(path)
    assert info.value.errors == [message.format(p=path)]


def test_node_list_problems(tmp_path: Path) -> None:
    path = _write(tmp_path, NODE_HEADER + "n-0,64000,262144,2,P100\nn-1,64000,262144,2,P100|T4\nn-0,1,1,1,\n"
                            "n-3,1,1,100,T4\n", "nodes.csv")
    with pytest.raises(TraceError) as info:
        alibaba.read_nodes(path)
    assert info.value.errors == [
        f'{path}:3: column "model": "P100|T4": a node has one GPU model',
        f'{path}:4: column "sn": "n-0" is already on line 2',
        f'{path}:5: column "gpu": "100" is not in 0..64',
    ]


def test_load_trace_reports_both_files_and_refuses_a_cluster_without_gpus(tmp_path: Path) -> None:
    nodes = _write(tmp_path, NODE_HEADER + "n-0,1,1,x,\n", "nodes.csv")
    pods = _write(tmp_path, "name,cpu_milli,num_gpu,gpu_milli\np,,0,0\n")
    with pytest.raises(TraceError) as info:
        alibaba.load_trace(nodes, pods)
    assert info.value.errors == [f'{nodes}:2: column "gpu": "x" is not a number',
                                 f'{pods}:2: column "cpu_milli": empty, a number is required']
    cpu_only = _write(tmp_path, NODE_HEADER + "n-0,32000,1024,0,\n", "cpu.csv")
    with pytest.raises(TraceError) as info:
        alibaba.load_trace(cpu_only, _write(tmp_path, "name,cpu_milli,num_gpu,gpu_milli\np,1,0,0\n"))
    assert info.value.errors == [f"{cpu_only}: no node has a GPU; the replay measures GPU allocation"]


# ---- what is not a regular file, or too large ----------------------------------------------------


def _in_child(code: str) -> str:
    """Run ``code`` in a fresh interpreter and return what it prints, killing it if it has not ended
    after a minute: a regression that blocks on a FIFO or loops for ever fails the test instead of
    hanging the run (the timeout only guards against that; nothing is timed)."""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not end: {code}")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _read_in_child(path: Path) -> list[str]:
    """read_pods(path)'s problems, read in a child process (:func:`_in_child`)."""
    code = ("import json; from kubesched.sim import alibaba\n"
            f"try:\n    alibaba.read_pods({str(path)!r})\n    print('[]')\n"
            "except alibaba.TraceError as err:\n    print(json.dumps(err.errors))\n")
    return list(json.loads(_in_child(code)))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pods.csv"
    os.mkfifo(fifo)
    assert _read_in_child(fifo) == [f"{fifo}: is a FIFO, not a regular file"]


def test_dev_null_a_directory_and_a_missing_file(tmp_path: Path) -> None:
    if Path("/dev/null").exists():
        assert _read_in_child(Path("/dev/null")) == ["/dev/null: is a device, not a regular file"]
    assert _read_in_child(tmp_path) == [f"{tmp_path}: is a directory, not a file"]
    assert _read_in_child(tmp_path / "nope.csv") == [f"{tmp_path / 'nope.csv'}: no such file or directory"]


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    with open(path, "wb") as f:  # sparse: no disk is used
        f.truncate(alibaba.MAX_CSV_BYTES + 1)
    assert _read_in_child(path) == [f"{path}: is 16777217 bytes, larger than the limit of 16777216 bytes"]


# ---- arrival: the tune loop always ends ----------------------------------------------------------


def _arrival_error(pod: str, gpus: int, tune: str) -> str:
    """The ValueError of ``arrival`` on one node of ``gpus`` GPUs and one pod, in a child process."""
    code = ("from kubesched.sim.alibaba import NodeRecord, PodRecord, Trace, arrival\n"
            f"trace = Trace(nodes=(NodeRecord('n', 128000, 1 << 20, {gpus}, 'G'),), pods=(PodRecord{pod},))\n"
            f"try:\n    arrival(trace, 1, {tune})\nexcept ValueError as err:\n    print(err)\n")
    return _in_child(code).strip()


def test_arrival_of_cpu_only_pods_does_not_loop_for_ever() -> None:
    # Upstream's tune-up loop never reaches 1.3 x 8000 milli when no pod asks for a GPU.
    assert _arrival_error("('x', 1000, 1, 0, 0)", 8, "1.3") == (
        "no pod asks for a GPU, so the workload cannot grow to tune 1.3 x the cluster's 8 GPUs")


@pytest.mark.parametrize(("tune", "shown"), [("float('nan')", "nan"), ("float('inf')", "inf"), ("10.5", "10.5")])
def test_arrival_of_a_tune_not_finite_or_too_large_is_refused(tune: str, shown: str) -> None:
    # Upstream's loop compares with a NaN or infinite target for ever, growing the pod list.
    assert _arrival_error("('x', 1000, 1, 1, 1000)", 8, tune) == f"tune must be a finite number <= 10, got {shown}"


def test_arrival_is_bounded_in_pods() -> None:
    # 1-milli shares on 64 GPUs at tune 10 would need 640000 copies: more than MAX_ARRIVAL_PODS.
    assert _arrival_error("('x', 1, 1, 1, 1)", 64, "10") == (
        "tune 10 makes more than 100000 pods arrive, the most one run may have; lower the tune")


@pytest.mark.parametrize("tune", [-1.0, 0.0])
def test_check_tune_wants_a_positive_tune(tune: float) -> None:
    with pytest.raises(ValueError, match=f"must be a finite number > 0 and <= 10, got {tune}"):
        alibaba.check_tune(tune)
