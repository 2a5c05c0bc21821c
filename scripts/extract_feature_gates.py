#!/usr/bin/env python3
"""Write src/kubesched/config/feature_gates_v1_35.json from the Go module cache.

kube-scheduler's ``--feature-gates`` knows every gate registered in its process's default feature
gate: kubernetes' pkg/features (which also lists the apiextensions and controller-manager gates),
k8s.io/apiserver's, client-go's (through the client adapter), component-base's logs, metrics and
zpages gates, and featuregate's own AllAlpha/AllBeta. This reads their VersionedSpecs maps as data
(names, and per version: default, stage, locked) and keeps the spec in force at emulation version
1.35 with the default min compatibility version 1.34, as featuregate does; plus the dependency map.

Usage: scripts/extract_feature_gates.py [GOMODCACHE]   (default: $(go env GOMODCACHE) or ~/go/pkg/mod)
The sources are those scripts/controlplane.sh downloads to build kube-scheduler v1.35.4.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

K8S = "1.35.4"
STAGING = "0.35.4"
EMULATION = (1, 35)
MIN_COMPAT = (1, 34)
OUT = Path(__file__).resolve().parents[1] / "src/kubesched/config/feature_gates_v1_35.json"

#: (module path in the cache, file): the files whose maps kube-scheduler v1.35 registers.
SOURCES = [
    (f"k8s.io/kubernetes@v{K8S}", "pkg/features/kube_features.go"),
    (f"k8s.io/apiserver@v{STAGING}", "pkg/features/kube_features.go"),
    (f"k8s.io/client-go@v{STAGING}", "features/known_features.go"),
    (f"k8s.io/component-base@v{STAGING}", "logs/api/v1/kube_features.go"),
    (f"k8s.io/component-base@v{STAGING}", "metrics/features/kube_features.go"),
    (f"k8s.io/component-base@v{STAGING}", "zpages/features/kube_features.go"),
]
#: Files that only define the constants of gates listed in the maps above.
CONSTANT_SOURCES = [
    (f"k8s.io/apiextensions-apiserver@v{STAGING}", "pkg/features/kube_features.go"),
    (f"k8s.io/controller-manager@v{STAGING}", "pkg/features/kube_features.go"),
]

CONST_RE = re.compile(r"^\s*(\w+)\s+(?:featuregate\.)?Feature\s*=\s*\"(\w+)\"", re.M)
ENTRY_RE = re.compile(r"^\t+(?:\w+\.)?(\w+):\s*\{\s*\n(.*?)^\t+\},", re.M | re.S)
SPEC_RE = re.compile(r"\{([^{}]*Version:\s*version\.MustParse\(\"([\d.]+)\"\)[^{}]*)\}")
DEPS_RE = re.compile(r"^\t+(?:\w+\.)?(\w+):\s*\{([^{}\n]*)\},", re.M)


def version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def map_body(src: str, start: str) -> str:
    """The text of the first map literal that opens with ``start`` (ending in its brace)."""
    opening = src.index(start) + len(start)
    depth, i = 1, opening
    while depth:
        depth += {"{": 1, "}": -1}.get(src[i], 0)
        i += 1
    return src[opening : i - 1]


def spec_in_force(specs: list[dict[str, object]]) -> dict[str, object] | None:
    """featuregate's featureSpecAtEmulationAndMinCompatVersion: the last spec not newer than the
    emulation version whose min compatibility version is met."""
    for spec in reversed(specs):
        if spec["version"] > EMULATION:  # type: ignore[operator]
            continue
        mcv = spec.get("minCompatibilityVersion")
        if mcv is not None and mcv > MIN_COMPAT:  # type: ignore[operator]
            continue
        return spec
    return None


def main() -> None:
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GOMODCACHE", "~/go/pkg/mod")).expanduser()
    names: dict[str, str] = {}
    texts = []
    for module, path in SOURCES + CONSTANT_SOURCES:
        text = (cache / module / path).read_text()
        names.update(dict(CONST_RE.findall(text)))
        if (module, path) in SOURCES:
            texts.append((f"{module}/{path}", text))
    gates: dict[str, dict[str, object]] = {
        "AllAlpha": {"default": False, "preRelease": "ALPHA", "lockToDefault": False},
        "AllBeta": {"default": False, "preRelease": "BETA", "lockToDefault": False},
    }
    deps: dict[str, list[str]] = {}
    for _where, text in texts:
        body = map_body(text, "VersionedSpecs{")
        for const, entry in ENTRY_RE.findall(body):
            specs = []
            for fields, ver in SPEC_RE.findall(entry):
                mcv = re.search(r"MinCompatibilityVersion:\s*version\.MustParse\(\"([\d.]+)\"\)", fields)
                pre = re.search(r"PreRelease:\s*(?:featuregate\.)?(\w+)", fields)
                specs.append({
                    "version": version(ver),
                    "default": re.search(r"(?<!To)Default:\s*true", fields) is not None,
                    "preRelease": {"Alpha": "ALPHA", "Beta": "BETA", "GA": "", "Deprecated": "DEPRECATED"}[
                        pre.group(1) if pre else "Alpha"
                    ],
                    "lockToDefault": re.search(r"LockToDefault:\s*true", fields) is not None,
                    "minCompatibilityVersion": version(mcv.group(1)) if mcv else None,
                })
            spec = spec_in_force(specs)
            name = names.get(const, const)
            if spec is None or name in gates:
                continue
            gates[name] = {key: spec[key] for key in ("default", "preRelease", "lockToDefault")}
        if "FeatureGateDependencies" in text:
            dep_body = map_body(text, "FeatureGateDependencies = map[featuregate.Feature][]featuregate.Feature{")
            for const, items in DEPS_RE.findall(dep_body):
                consts = [d.split(".")[-1].strip() for d in items.split(",") if d.strip()]
                listed = [names.get(c, c) for c in consts]
                if listed:
                    deps[names.get(const, const)] = listed
    out = {
        "_comment": (
            f"kube-scheduler v{K8S}'s feature gates (names; default, stage and lock at emulation version 1.35), "
            "extracted by scripts/extract_feature_gates.py from "
            + ", ".join(f"{m}/{p}" for m, p in SOURCES)
            + "; constants from "
            + ", ".join(f"{m}/{p}" for m, p in CONSTANT_SOURCES)
            + ". preRelease '' is GA."
        ),
        "version": K8S,
        "gates": dict(sorted(gates.items())),
        "dependencies": dict(sorted(deps.items())),
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(gates)} gates, {len(deps)} with dependencies -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
