#!/usr/bin/env python3
"""Write src/kubesched/config/feature_gates_v1_<minor>.json, one per supported release, from Go sources.

kube-scheduler's ``--feature-gates`` knows every gate registered in its process's default feature
gate: kubernetes' pkg/features (which also lists the apiextensions and controller-manager gates),
k8s.io/apiserver's, client-go's (through the client adapter), component-base's logs, metrics and
zpages gates, and featuregate's own AllAlpha/AllBeta. This reads their VersionedSpecs maps as data
(names, and per version: default, stage, locked) and keeps the spec in force at the release's own
emulation version (1.Y for v1.Y.Z) with the default min compatibility version (1.Y-1), as
featuregate does when ``--emulated-version`` is not given; plus the dependency map. Each release is
read from its own sources: a gate the v1.Y.Z sources no longer list is unknown to that binary.

Usage: scripts/extract_feature_gates.py [--release 1.Y ...] [GOMODCACHE]
  --release   only this release (repeatable; default: all of RELEASES)
  GOMODCACHE  where the module sources are (default: $GOMODCACHE or ~/go/pkg/mod); a module not
              there is fetched with ``go mod download -json`` (the Go module proxy).
The sources are those scripts/controlplane.sh builds kube-scheduler from (k8s.io/kubernetes and its
published staging modules, v0.Y.Z for v1.Y.Z).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: The patch release of each supported minor, as scripts/controlplane.sh and
#: kubesched.config.releases name them.
RELEASES = {"1.35": "1.35.4", "1.36": "1.36.3", "1.37": "1.37.2"}
CONFIG_DIR = Path(__file__).resolve().parents[1] / "src/kubesched/config"


@dataclass(frozen=True)
class Release:
    """One kube-scheduler release: its sources and the emulation version its gates are read at."""

    k8s: str  # "1.37.2"

    @property
    def minor(self) -> int:
        return int(self.k8s.split(".")[1])

    @property
    def staging(self) -> str:
        return "0." + self.k8s.split(".", 1)[1]

    @property
    def emulation(self) -> tuple[int, int]:
        return (1, self.minor)

    @property
    def min_compat(self) -> tuple[int, int]:
        return (1, self.minor - 1)

    @property
    def out(self) -> Path:
        return CONFIG_DIR / f"feature_gates_v1_{self.minor}.json"

    @property
    def sources(self) -> list[tuple[str, str]]:
        """(module@version, file): the files whose maps kube-scheduler registers."""
        return [
            (f"k8s.io/kubernetes@v{self.k8s}", "pkg/features/kube_features.go"),
            (f"k8s.io/apiserver@v{self.staging}", "pkg/features/kube_features.go"),
            (f"k8s.io/client-go@v{self.staging}", "features/known_features.go"),
            (f"k8s.io/component-base@v{self.staging}", "logs/api/v1/kube_features.go"),
            (f"k8s.io/component-base@v{self.staging}", "metrics/features/kube_features.go"),
            (f"k8s.io/component-base@v{self.staging}", "zpages/features/kube_features.go"),
        ]

    @property
    def constant_sources(self) -> list[tuple[str, str]]:
        """Files that only define the constants of gates listed in the maps of :attr:`sources`."""
        return [
            (f"k8s.io/apiextensions-apiserver@v{self.staging}", "pkg/features/kube_features.go"),
            (f"k8s.io/controller-manager@v{self.staging}", "pkg/features/kube_features.go"),
        ]

CONST_RE = re.compile(r"^\s*(\w+)\s+(?:featuregate\.)?Feature\s*=\s*\"(\w+)\"", re.M)
ENTRY_RE = re.compile(r"^\t+(?:\w+\.)?(\w+):\s*\{\s*\n(.*?)^\t+\},", re.M | re.S)
SPEC_RE = re.compile(r"\{([^{}]*Version:\s*version\.MustParse\(\"([\d.]+)\"\)[^{}]*)\}")
DEPS_RE = re.compile(r"^\t+(?:\w+\.)?(\w+):\s*\{([^{}\n]*)\},", re.M)
CONVERSION_RE = re.compile(r"^(?:\w+\.)?Feature\((.*)\)$")


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


def spec_in_force(
    specs: list[dict[str, object]], emulation: tuple[int, int], min_compat: tuple[int, int]
) -> dict[str, object] | None:
    """featuregate's featureSpecAtEmulationAndMinCompatVersion: the last spec not newer than the
    emulation version whose min compatibility version is met."""
    for spec in reversed(specs):
        if spec["version"] > emulation:  # type: ignore[operator]
            continue
        mcv = spec.get("minCompatibilityVersion")
        if mcv is not None and mcv > min_compat:  # type: ignore[operator]
            continue
        return spec
    return None


def module_dir(cache: Path, module: str) -> Path:
    """The module's source directory: in ``cache`` if there, else fetched by ``go mod download``."""
    local = cache / module
    if local.is_dir():
        return local
    info = json.loads(subprocess.run(
        ["go", "mod", "download", "-json", module], capture_output=True, text=True, check=False
    ).stdout or "{}")
    if not info.get("Dir"):
        raise SystemExit(f"cannot fetch {module}: {info.get('Error', 'go mod download failed')}")
    return Path(info["Dir"])


def extract(release: Release, cache: Path) -> None:
    """Write ``release.out``: its gates at its own emulation version, and their dependencies."""
    sources, constant_sources = release.sources, release.constant_sources
    names: dict[str, str] = {}
    texts = []
    for module, path in sources + constant_sources:
        text = (module_dir(cache, module) / path).read_text()
        names.update(dict(CONST_RE.findall(text)))
        if (module, path) in sources:
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
            spec = spec_in_force(specs, release.emulation, release.min_compat)
            name = names.get(const, const)
            if spec is None or name in gates:
                continue
            gates[name] = {key: spec[key] for key in ("default", "preRelease", "lockToDefault")}
        if "FeatureGateDependencies" in text:
            dep_body = map_body(text, "FeatureGateDependencies = map[featuregate.Feature][]featuregate.Feature{")
            for const, items in DEPS_RE.findall(dep_body):
                # an item is a constant (``X``, ``pkg.X``) or a conversion (``featuregate.Feature(pkg.X)``)
                consts = [CONVERSION_RE.sub(r"\1", d.strip()).split(".")[-1] for d in items.split(",") if d.strip()]
                listed = [names.get(c, c) for c in consts]
                if listed:
                    deps[names.get(const, const)] = listed
    unknown = sorted({n for k, v in deps.items() for n in (k, *v) if n not in gates})
    if unknown:  # a gate the maps do not define: a source this script does not read, or a misparse
        raise SystemExit(f"v{release.k8s}: dependencies name gates not found: {', '.join(unknown)}")
    emulation = ".".join(map(str, release.emulation))
    out = {
        "_comment": (
            f"kube-scheduler v{release.k8s}'s feature gates (names; default, stage and lock at emulation version "
            f"{emulation}), extracted by scripts/extract_feature_gates.py from "
            + ", ".join(f"{m}/{p}" for m, p in sources)
            + "; constants from "
            + ", ".join(f"{m}/{p}" for m, p in constant_sources)
            + ". preRelease '' is GA."
        ),
        "version": release.k8s,
        "gates": dict(sorted(gates.items())),
        "dependencies": dict(sorted(deps.items())),
    }
    release.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"v{release.k8s}: {len(gates)} gates, {len(deps)} with dependencies -> {release.out}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--release", action="append", choices=sorted(RELEASES), help="only this minor (repeatable)")
    parser.add_argument("gomodcache", nargs="?", default=os.environ.get("GOMODCACHE", "~/go/pkg/mod"))
    args = parser.parse_args()
    cache = Path(args.gomodcache).expanduser()
    for minor in args.release or sorted(RELEASES):
        extract(Release(RELEASES[minor]), cache)


if __name__ == "__main__":
    main()
