"""The example scenarios shipped with kubesched: where they are, what each shows, and copying one
out so that the README's quickstart works from an installed wheel (``kubesched examples``).

A wheel carries them as ``kubesched/examples`` (setup.py copies the checkout's ``examples/`` at
build time); a development install reads the checkout's ``examples/`` itself.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: One line each, as the README's table says them; an example not listed shows its README's title.
SUMMARIES = {
    "quickstart": "28 nodes in three zones and 57 pods of several sizes and priorities (the README's first run)",
    "affinity-spread": "pod (anti-)affinity and topology spreading",
    "window-transfer": "bulk transfers only in a nightly network window, on nodes with free bandwidth",
    "tenants": "tenants on dedicated nodes, elastic quotas with borrowing and reclaim",
    "fair-share": "fair share between tenants in the queue (dominant resource share)",
    "gpu": "GPU topology (NVLink groups, NUMA) and GPU sharing with FGD scoring",
    "gpu-dra": "GPUs claimed through DRA (ResourceClaims, NVLink constraints), placed by DRAGpuScore",
    "gang": "gangs that start whole or not at all (PodGroups, Coscheduling)",
    "volumes": "StatefulSets on local disks, volumes provisioned where their class allows",
    "plugins": "an out-of-tree plugin: its package, a custom main and its configuration",
}


class ExampleError(ValueError):
    """An example that does not exist, or a destination that cannot take it."""


@dataclass(frozen=True)
class Example:
    name: str
    path: Path
    summary: str


def examples_root() -> Path | None:
    """The folder of the examples: the installed package's copy, else a checkout's ``examples/``."""
    packaged = resources.files("kubesched") / "examples"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file() and (checkout / "examples").is_dir():
        return checkout / "examples"
    return None


def list_examples(root: Path | None = None) -> list[Example]:
    root = root or examples_root()
    if root is None:
        return []
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        out.append(Example(d.name, d, SUMMARIES.get(d.name) or _title(d)))
    return out


def _title(folder: Path) -> str:
    readme = folder / "README.md"
    if readme.is_file():
        for line in readme.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return ""


def copy_example(name: str, dest: Path, root: Path | None = None) -> Path:
    """Copy example ``name`` into ``dest`` (created; it must not exist or be an empty folder)."""
    by_name = {e.name: e for e in list_examples(root)}
    if name not in by_name:
        known = ", ".join(by_name) or "none (kubesched was installed without its examples)"
        raise ExampleError(f"unknown example {name!r}; one of {known}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ExampleError(f"{dest}: exists and is not an empty folder")
    if dest.exists():
        dest.rmdir()
    try:
        shutil.copytree(by_name[name].path, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    except OSError as err:
        raise ExampleError(f"{dest}: {err.strerror or err}") from None
    return dest
