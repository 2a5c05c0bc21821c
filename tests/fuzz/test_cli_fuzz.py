"""Fuzzing the command line (issue 11): every input works or exits 2, never a traceback, never a hang.

Three generators, each a hypothesis property with a fixed seed (``derandomize``) and a budget that
keeps the whole module well under two minutes on this machine:

* configurations: a valid ``scheduler-config.yaml`` from ``examples/`` with one node of its JSON tree
  replaced, deleted, or given a sibling (a random JSON value: wrong types, NaN, huge numbers,
  console markup, control characters, deep nesting);
* manifests: the same mutations on an example's Nodes and Pods;
* option values: random text and numbers for every option of ``simulate``, ``trace`` and ``bench``.

Property: exit code 0 or 2, no ``Traceback`` in the output, no exception escaping the command, and the
command returns within a time bound (SIGALRM turns a hang into a failure). A minimal example that
hypothesis finds becomes a named regression test next to the code it exercises.
"""

from __future__ import annotations

import copy
import json
import math
import os
import signal
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: Seconds one command may take before it counts as a hang (the issue's bound for 10 MB is 10 s;
#: these inputs are a few kB).
TIME_BOUND = 20

FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    database=None,
)

#: What a field may be replaced with: JSON values of every type, and the hostile ones.
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e400 if False else 1e300, -0.0]),
    st.text(max_size=12),
    st.sampled_from(["", "[/]", "[bold]x[/]", "\x1b[31m", "1e400", "-1", "abc", "NaN", "100Mi", "x" * 300,
                     "2026-01-01T00:00:00Z", "nan", "inf", "9999-12-31T23:59:59Z", "*", "{}", "[]", "\u202e"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


@contextmanager
def time_bound(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"the command did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def invoke(args: list[str]) -> Result:
    with time_bound(TIME_BOUND):
        result = CliRunner().invoke(cli, args, catch_exceptions=True)
    if isinstance(result.exception, TimeoutError):
        raise result.exception
    return result


#: Exit codes seen per command, for the summary (``KUBESCHED_FUZZ_TALLY=FILE`` writes it as JSON).
TALLY: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _tally() -> Iterator[None]:
    yield
    out = os.environ.get("KUBESCHED_FUZZ_TALLY")
    if out:
        Path(out).write_text(json.dumps(dict(sorted(TALLY.items())), indent=1))


def check(result: Result, args: list[str]) -> None:
    TALLY[f"{args[0]} exit {result.exit_code}"] += 1
    TALLY[f"{args[0]} traceback"] += "Traceback" in result.output
    shown = " ".join(a if len(a) < 200 else a[:200] + "..." for a in args)
    unexpected = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not unexpected, f"kubesched {shown}: raised {result.exception!r}\n{result.output[-2000:]}"
    assert result.exit_code in (0, 2), f"kubesched {shown}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert "Traceback" not in result.output, f"kubesched {shown}: a traceback\n{result.output[-3000:]}"


# -- mutations ------------------------------------------------------------------------------------
def paths_of(tree: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.extend(paths_of(v, (*prefix, k)))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out.extend(paths_of(v, (*prefix, i)))
    return out


@st.composite
def mutated(draw: st.DrawFn, tree: Any, max_mutations: int = 3) -> Any:
    """``tree`` with a few nodes replaced by random JSON values, deleted, or given a sibling."""
    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = paths_of(tree)
        path = draw(st.sampled_from(paths))
        value = draw(json_values)
        if not path:
            tree = value
            continue
        parent = tree
        for p in path[:-1]:
            parent = parent[p]
        op = draw(st.sampled_from(["replace", "replace", "delete", "sibling"]))
        if op == "replace":
            parent[path[-1]] = value
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = value
        else:
            parent.append(value)
    return tree


def dump(docs: list[Any]) -> str:
    """YAML as a user would write it; values YAML cannot carry (NaN keys...) fall back to JSON."""
    try:
        return yaml.safe_dump_all(docs, allow_unicode=True)
    except yaml.YAMLError:
        return "\n---\n".join(json.dumps(d) for d in docs)


def load_docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


CONFIGS = sorted(EXAMPLES.glob("*/scheduler-config.yaml"))
SMALL_SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default, labels: {app: a}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("scenario")
    (d / "cluster.yaml").write_text(SMALL_SCENARIO)
    return d


@pytest.mark.parametrize("config", CONFIGS, ids=[c.parent.name for c in CONFIGS])
def test_mutated_configurations(config: Path, scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert CONFIGS, "examples/*/scheduler-config.yaml: none found"
    base = load_docs(config)
    out = tmp_path_factory.mktemp("cfg") / "scheduler-config.yaml"

    @FUZZ
    @given(mutated(base[0] if len(base) == 1 else base))
    def run(doc: Any) -> None:
        out.write_text(dump([doc]))
        args = ["simulate", str(scenario), "--config", str(out), "-o", "json"]
        check(invoke(args), args)

    run()


MANIFEST_EXAMPLES = ["quickstart", "affinity-spread", "tenants", "gpu", "gang", "window-transfer"]


@pytest.mark.parametrize("example", MANIFEST_EXAMPLES)
def test_mutated_manifests(example: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = EXAMPLES / example
    config = folder / "scheduler-config.yaml"
    docs = [d for f in sorted(folder.glob("*.yaml")) if f != config for d in load_docs(f)]
    assert docs, f"{folder}: no manifests"
    out_dir = tmp_path_factory.mktemp(example)
    extra = ["--config", str(config)] if config.exists() else []

    @FUZZ
    @given(st.data())
    def run(data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(docs) - 1))
        mutated_docs = list(docs)
        mutated_docs[index] = data.draw(mutated(docs[index]))
        (out_dir / "all.yaml").write_text(dump(mutated_docs))
        args = ["simulate", str(out_dir), *extra, "-o", "json"]
        check(invoke(args), args)

    run()


def test_raw_bytes_as_manifest_and_config(scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = tmp_path_factory.mktemp("raw")

    @FUZZ
    @given(st.binary(max_size=300), st.booleans())
    def run(data: bytes, as_config: bool) -> None:
        f = out / "input.yaml"
        f.write_bytes(data)
        args = ["simulate", str(scenario), "--config", str(f)] if as_config else ["simulate", str(f)]
        check(invoke(args), args)

    run()


option_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["nan", "inf", "-inf", "1e300", "-1", "0", "", ",", "..", "1..0", "1..100000000",
                     "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2026-01-01",
                     "10h", "-5s", "1e12", "all", "FGD,,", "[/]", "\x1b[2J"]),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def test_simulate_option_values(scenario: Path) -> None:
    @FUZZ
    @given(st.lists(st.tuples(st.sampled_from(["--start", "--until", "--seed", "--tie-break", "-o", "-v"]),
                              option_text), max_size=3))
    def run(options: list[tuple[str, str]]) -> None:
        args = ["simulate", str(scenario)] + [x for pair in options for x in pair]
        check(invoke(args), args)

    run()


TRACE_NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,262144,2,V100M16\nn2,32000,262144,0,\n"
TRACE_PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p1,4000,8192,1,1000,,LS,Running,0,100,1\n"
    "p2,2000,4096,1,500,,BE,Running,1,100,2\n"
    "p3,1000,2048,0,0,,LS,Running,2,100,3\n"
)


def test_trace_and_bench_option_values(tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("trace")
    (d / "nodes.csv").write_text(TRACE_NODES)
    (d / "pods.csv").write_text(TRACE_PODS)
    base = ["trace", "alibaba-gpu", "--nodes", str(d / "nodes.csv"), "--pods", str(d / "pods.csv")]

    @FUZZ
    @given(st.lists(st.tuples(st.sampled_from(["--policy", "--tune", "--seed", "--seeds", "-o"]), option_text),
                    max_size=3), st.sampled_from(["FGD", "Random", "BestFit"]))
    def run_trace(options: list[tuple[str, str]], policy: str) -> None:
        args = [*base, "--policy", policy] + [x for pair in options for x in pair]
        check(invoke(args), args)

    run_trace()

    # bench: only values that are refused or tiny, so no run is long (sizes up to 50).
    small = st.integers(-5, 50).map(str)

    @FUZZ
    @given(st.lists(st.tuples(st.sampled_from(["--nodes", "--init-pods", "--pods", "--seed"]),
                              st.one_of(small, option_text.filter(lambda s: not s.strip().lstrip("+").isdigit()))),
                    min_size=3, max_size=4),
           st.sampled_from(["SchedulingBasic", "NodeAffinity", "Nope", "", "[/]"]))
    def run_bench(options: list[tuple[str, str]], workload: str) -> None:
        args = ["bench", "--workload", workload, "--nodes", "5", "--init-pods", "0", "--pods", "5",
                *[x for pair in options for x in pair]]
        check(invoke(args), args)

    run_bench()
