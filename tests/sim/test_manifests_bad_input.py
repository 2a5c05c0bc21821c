"""Bad manifests (issue 11): every problem of every file is one line naming the file, the line,
the document and the field, the run exits 2, and nothing raises anything but ManifestError.

Where the API server defines the answer, the expected text is upstream's:
plugin/pkg/admission/priority/admission.go (``no PriorityClass with name X was found``, ``PriorityClass
X is already marked as default. Only one default can exist``, ``the integer value of priority (N)
must not be provided in pod spec; ...``), pkg/apis/scheduling/validation/validation.go
(``maximum allowed value of a user defined priority is 1000000000``, the ``system-`` prefix) and
apimachinery's AlreadyExists (``pods "web" already exists``). Line numbers are counted by hand in
the texts below.
"""

from __future__ import annotations

import json
import os
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kubesched.cli import cli
from kubesched.sim.manifests import ManifestError, load_manifests

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "10"}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


def errors_of(*paths: Path) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifests(paths)
    return info.value.errors


# -- structure ------------------------------------------------------------------------------------

STRUCTURE_CASES = [
    pytest.param("apiVersion: v1\nkind: 5\nmetadata: {name: x}\n",
                 ["{f}:2: document 1 (x): kind: must be a string, got 5"], id="kind-5"),
    pytest.param("apiVersion: v1\nmetadata: {name: x}\n",
                 ["{f}:1: document 1 (x): kind: Required value"], id="kind-missing"),
    pytest.param("kind: Pod\napiVersion: [v1]\nmetadata: {name: x}\n",
                 ['{f}:2: document 1 (Pod default/x): apiVersion: must be a string, got a list'], id="apiversion-list"),
    pytest.param("apiVersion: v1\nkind: List\nitems: 5\n",
                 ["{f}:3: document 1 (List): items: must be a list, got 5"], id="items-5"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata: []\n",
                 ["{f}:3: document 1 (Pod): metadata: must be an object, got a list"], id="metadata-list"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata:\n  name: 7\n",
                 ["{f}:4: document 1 (Pod): metadata.name: must be a string, got 7"], id="name-int"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {}\n",
                 ["{f}:3: document 1 (Pod): metadata.name: Required value: name or generateName is required"],
                 id="name-missing"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: 5\n",
                 ["{f}:4: document 1 (Pod default/p): spec: must be an object, got 5"], id="spec-int"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: [a]}\n",
                 ["{f}:3: document 1 (Pod default/p): metadata.annotations: must be an object, got a list"],
                 id="annotations-list"),
    pytest.param("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: t\n  labels:\n    tenant: 5\n",
                 ["{f}:6: document 1 (Namespace t): metadata.labels[tenant]: must be a string, got 5"],
                 id="namespace-label-int"),
    pytest.param("- 1\n- 2\n", ["{f}:1: document 1: a manifest must be an object, got a list"], id="doc-list"),
    pytest.param("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\n",
                 ['{f}:1: document 1 (Pod default/p): apiVersion: no matches for kind "Pod" in version '
                  '"apps/v1" (served: v1)'], id="wrong-group"),
    pytest.param("apiVersion: v1\nkind: PodList\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: 3}\n",
                 ["{f}:6: document 1 items[0] (Pod): metadata.name: must be a string, got 3"], id="list-item"),
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
                 "    sim.kubesched.io/arrival: soon\n",
                 ["{f}:6: document 1 (Pod default/p): metadata.annotations[sim.kubesched.io/arrival]: "
                  "invalid time 'soon' (use RFC 3339, e.g. 2026-01-01T21:00:00Z, or a duration such as 2h)"],
                 id="arrival"),
]


@pytest.mark.parametrize(("text", "expected"), STRUCTURE_CASES)
def test_structural_problems(tmp_path: Path, text: str, expected: list[str]) -> None:
    f = write(tmp_path, "m.yaml", text)
    assert errors_of(f) == [e.format(f=f) for e in expected]


def test_null_spec_status_metadata_read_as_absent(tmp_path: Path) -> None:
    # The API server's decoder reads null as the empty struct: the pod loads (and then the
    # metadata: null one is refused for its missing name, not for its type).
    f = write(tmp_path, "m.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: null\nstatus: null\n")
    objs = load_manifests([f])
    assert objs.pods[0]["spec"]["schedulerName"] == "default-scheduler"
    g = write(tmp_path, "g.yaml", "apiVersion: v1\nkind: Pod\nmetadata: null\n")
    assert errors_of(g) == [f"{g}:3: document 1 (Pod): metadata.name: Required value: name or generateName is required"]


def test_every_problem_of_every_file_in_one_run(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", "apiVersion: v1\nkind: 5\nmetadata: {name: x}\n---\n"
                                  "apiVersion: v1\nkind: Pod\nmetadata: []\n")
    b = write(tmp_path, "b.yaml", "a: 1\na: 2\n")
    assert errors_of(a, b) == [
        f"{a}:2: document 1 (x): kind: must be a string, got 5",
        f"{a}:7: document 2 (Pod): metadata: must be an object, got a list",
        f"{b}:2: duplicate key 'a' (first at line 1)",
    ]


# -- the reader's refusals ----------------------------------------------------------------------


def test_unreadable_inputs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"apiVersion: v1\nkind: \xff\n")
    deep = write(tmp_path, "deep.yaml", "x: " + "[" * 500 + "]" * 500 + "\n")
    laughs = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    laughs += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lol = write(tmp_path, "lol.yaml", "\n".join(laughs) + "\n")
    errs = errors_of(bad, deep, lol, tmp_path / "missing.yaml")
    assert errs[0] == f"{bad}:2: not valid UTF-8: byte 0xff at offset 21"
    assert errs[1].startswith(f"{deep}:1: nesting deeper than ")
    # a_k holds 1 + 10 * |a_(k-1)| nodes (11, 111, 1111, ...): a1..a3 expand to 12,330 nodes, so
    # the 100,000 budget runs out at the 8th alias of a4, on line 5.
    assert errs[2].startswith(f"{lol}:5: aliases expand to more than ")
    assert errs[3] == f"{tmp_path / 'missing.yaml'}: no such file or directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_devices_never_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    # Named on the command line: refused without being opened (opening it would block).
    assert errors_of(fifo, Path("/dev/null")) == [
        f"{fifo}: is a FIFO, not a regular file",
        "/dev/null: is a device, not a regular file",
    ]
    # Inside a folder: skipped with a warning, the rest is read.
    write(tmp_path, "node.yaml", NODE)
    objs = load_manifests([tmp_path])
    assert [n["metadata"]["name"] for n in objs.nodes] == ["n1"]
    assert objs.warnings == [f"{fifo}: skipped: not a regular file"]


# -- duplicates -----------------------------------------------------------------------------------


def test_duplicate_objects_in_one_file_and_across_files(tmp_path: Path) -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
    a = write(tmp_path, "a.yaml", pod + "---\n" + pod.replace("web", "db") + "---\n" + pod)
    b = write(tmp_path, "b.yaml", NODE + "---\n" + pod.replace("name: web", "name: web\n  namespace: default"))
    c = write(tmp_path, "c.yaml", NODE)
    assert errors_of(a, b, c) == [
        f'{a}:14: document 3 (Pod default/web): metadata.name: pods "web" already exists '
        f"(first defined at {a}:4, document 1 (Pod default/web))",
        f'{b}:11: document 2 (Pod default/web): metadata.name: pods "web" already exists '
        f"(first defined at {a}:4, document 1 (Pod default/web))",
        f'{c}:4: document 1 (Node n1): metadata.name: nodes "n1" already exists '
        f"(first defined at {b}:4, document 1 (Node n1))",
    ]


def test_same_name_in_other_namespace_or_kind_is_no_duplicate(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", """\
        apiVersion: v1
        kind: Pod
        metadata: {name: web, namespace: a}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: web, namespace: b}
        ---
        apiVersion: v1
        kind: Namespace
        metadata: {name: web}
        """)
    objs = load_manifests([f])
    assert len(objs.pods) == 2 and len(objs.of_kind("Namespace")) == 1


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    f = write(tmp_path, "node.yaml", NODE)
    assert len(load_manifests([f, tmp_path, f]).nodes) == 1


# -- PriorityClasses and the Priority admission plugin ------------------------------------------

PC = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {name}\nvalue: {value}\n"


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("high", "abc", 'value: must be an integer, got "abc"'),
    ("high", "1.5", "value: must be an integer, got 1.5"),
    ("high", "true", "value: must be an integer, got true"),
    ("high", "3000000000", "value: Invalid value: 3000000000: must be a 32-bit integer"),
    ("high", "1000000001", "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    ("system-mine", "5", "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
                         "system use only. error: system-mine is not a known system priority class"),
    ("system-node-critical", "5", "metadata.name: Forbidden: priority class names with 'system-' prefix are "
                                  "reserved for system use only. error: value of system-node-critical "
                                  "PriorityClass must be 2000001000"),
])
def test_priority_class_validation(tmp_path: Path, name: str, value: str, expected: str) -> None:
    f = write(tmp_path, "pc.yaml", PC.format(name=name, value=value))
    field = expected.split(":")[0]
    line = 4 if field == "metadata.name" else 5
    assert errors_of(f) == [f"{f}:{line}: document 1 (PriorityClass {name}): {expected}"]


def test_second_global_default_is_forbidden(tmp_path: Path) -> None:
    f = write(tmp_path, "pc.yaml", PC.format(name="first", value=10) + "globalDefault: true\n---\n"
              + PC.format(name="second", value=20) + "globalDefault: true\n")
    assert errors_of(f) == [
        f'{f}:13: document 2 (PriorityClass second): globalDefault: priorityclasses.scheduling.k8s.io "second" '
        "is forbidden: PriorityClass first is already marked as default. Only one default can exist"
    ]


def test_missing_priority_class_refuses_the_pod(tmp_path: Path) -> None:
    f = write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
                                    "  priorityClassName: high\n")
    assert errors_of(f) == [
        f'{f}:5: document 1 (Pod default/web): spec.priorityClassName: pods "web" is forbidden: '
        "no PriorityClass with name high was found"
    ]


def test_priority_admission_sets_value_policy_and_default(tmp_path: Path) -> None:
    pcs = write(tmp_path, "pc.yaml", PC.format(name="batch", value=7) + "globalDefault: true\n"
                "preemptionPolicy: Never\n---\n" + PC.format(name="high", value=1000))
    pods = write(tmp_path, "pods.yaml", """\
        apiVersion: v1
        kind: Pod
        metadata: {name: a}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: b}
        spec: {priorityClassName: high}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: c}
        spec: {priorityClassName: system-node-critical}
        """)
    objs = load_manifests([pcs, pods])
    spec = {p["metadata"]["name"]: p["spec"] for p in objs.pods}
    assert (spec["a"]["priorityClassName"], spec["a"]["priority"], spec["a"]["preemptionPolicy"]) == (
        "batch", 7, "Never")
    assert spec["b"]["priority"] == 1000 and "preemptionPolicy" not in spec["b"]
    assert spec["c"]["priority"] == 2000001000


def test_priority_integer_differing_from_the_class_is_forbidden(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", PC.format(name="high", value=1000) + "---\n"
              "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  priorityClassName: high\n  priority: 5\n")
    assert errors_of(f) == [
        f'{f}:12: document 2 (Pod default/web): spec.priority: pods "web" is forbidden: the integer value of '
        "priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the "
        "given PriorityClass name"
    ]


def test_a_refused_class_is_not_also_reported_missing(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", PC.format(name="high", value="abc") + "---\n"
              "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {priorityClassName: high}\n")
    assert errors_of(f) == [f'{f}:5: document 1 (PriorityClass high): value: must be an integer, got "abc"']


# -- warnings: the scheduler isolates these ------------------------------------------------------


def test_pod_bound_to_a_missing_node_is_a_warning(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ghost}\n"
                                         "spec:\n  nodeName: gone\n")
    objs = load_manifests([f])
    assert objs.warnings == [
        f'{f}:12: document 2 (Pod default/ghost): spec.nodeName: node "gone" not found: the pod stays bound '
        "to it (as on an API server without PodGC) and counts as bound, using no node's resources"
    ]
    assert objs.pods[0]["spec"]["nodeName"] == "gone"


def test_field_problems_of_pods_and_nodes_are_warnings_with_lines(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", """\
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        spec:
          taints:
          - {key: k, effect: Sometimes}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            resources:
              requests:
                cpu: "-1"
        """)
    objs = load_manifests([f])
    assert objs.warnings == [
        f'{f}:6: document 1 (Node n1): spec.taints[0].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        f'{f}:16: document 2 (Pod default/p): spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
        "must be greater than or equal to 0",
    ]


# -- through the command line ---------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.stdout and "Traceback" not in r.stderr
    return r.exit_code, r.stdout, r.stderr


def test_cli_simulate_prints_every_problem_and_exits_2(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
                                  "spec: {priorityClassName: high}\n")
    b = write(tmp_path, "b.yaml", PC.format(name="x", value="abc"))
    code, out, err = invoke("simulate", str(a), str(b))
    assert code == 2 and out == ""
    assert err == (f'error: {a}:4: document 1 (Pod default/web): spec.priorityClassName: pods "web" is forbidden: '
                   "no PriorityClass with name high was found\n"
                   f'error: {b}:5: document 1 (PriorityClass x): value: must be an integer, got "abc"\n')


def test_cli_simulate_warns_and_goes_on(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ghost}\n"
                                         "spec:\n  nodeName: gone\n")
    code, out, err = invoke("simulate", str(f), "-o", "json")
    assert code == 0
    [pod] = json.loads(out)["pods"]
    assert pod["node"] == "gone"
    assert f'warning: {f}:12: document 2 (Pod default/ghost): spec.nodeName: node "gone" not found' in err


def test_cli_explain_checks_the_pod_file(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", NODE)
    pod = write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
                                      "spec: {priorityClassName: high}\n")
    code, _, err = invoke("explain", str(cluster), "--pod", str(pod))
    assert code == 2
    assert err == (f'error: {pod}:4: document 1 (Pod default/web): spec.priorityClassName: pods "web" is '
                   "forbidden: no PriorityClass with name high was found\n")
    two = write(tmp_path, "two.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n"
                                      "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n")
    code, _, err = invoke("explain", str(cluster), "--pod", str(two))
    assert code == 2 and err == f"error: {two}: expected exactly one Pod, found 2 Pods\n"


# -- property: a mutated example never raises anything but ManifestError -----------------------

EXAMPLE_DOCS: list[tuple[str, list[Any]]] = [
    (f.name, list(yaml.safe_load_all(f.read_text())))
    for f in sorted(EXAMPLES.rglob("*.yaml")) if "KubeSchedulerConfiguration" not in f.read_text()
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_nodes(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_nodes(v, (*path, i)))
    return out


def _replace(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return root


@seed(11)
@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(0, 10**6), where=st.integers(0, 10**6), new=JSON_VALUES)
def test_mutated_examples_load_or_raise_manifest_error(tmp_path: Path, which: int, where: int, new: Any) -> None:
    name, docs = EXAMPLE_DOCS[which % len(EXAMPLE_DOCS)]
    docs = json.loads(json.dumps(docs))
    targets = [(d, p) for d, doc in enumerate(docs) for p in _nodes(doc)]
    d, path = random.Random(where).choice(targets)
    docs[d] = _replace(docs[d], path, new)
    f = tmp_path / name
    f.write_text("\n---\n".join(json.dumps(doc) for doc in docs))
    try:
        objs = load_manifests([f])
    except ManifestError as err:
        assert err.errors and all(line.startswith(str(f)) for line in err.errors)
    else:
        assert all(line.startswith(str(f)) for line in objs.warnings)
