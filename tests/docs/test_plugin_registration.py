"""The registration paths of docs/plugin-guide.md: config, entry point, custom main; and the guide's quotes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from transfer_window import TransferWindow, TransferWindowArgs

from kubesched.config.load import load_config
from kubesched.plugins.registry import default_registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "plugins"


def test_example_config_decodes_the_args() -> None:
    config = load_config(str(EXAMPLES / "scheduler-config.yaml"), args_types={"TransferWindow": TransferWindowArgs})
    profile = config.profiles[0]
    assert profile.args_for("TransferWindow") == TransferWindowArgs(window_start="22:00", window_end="06:00")
    assert "TransferWindow" in [ref.name for ref in profile.plugins.multi_point.enabled]


def test_entry_point_registers_the_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What `pip install` of examples/plugins/pyproject.toml leaves on sys.path.
    dist = tmp_path / "transfer_window_plugin-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: transfer-window-plugin\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\nTransferWindow = transfer_window:TransferWindow\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    spec = default_registry()["TransferWindow"]
    assert spec.factory is TransferWindow
    assert spec.args_type is TransferWindowArgs
    assert spec.origin == "entry point transfer-window-plugin"


def test_custom_main_runs_the_plugin(tmp_path: Path) -> None:
    # Only the plugins this run needs, so it does not depend on every default plugin being registered.
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- plugins:\n"
        "    multiPoint:\n"
        "      enabled: [{name: PrioritySort}, {name: TransferWindow}, {name: DefaultBinder}]\n"
        "      disabled: [{name: '*'}]\n"
        "  pluginConfig:\n"
        "  - {name: TransferWindow, args: {windowStart: '22:00', windowEnd: '06:00'}}\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "my_scheduler.py"),
            "simulate",
            str(EXAMPLES / "cluster.yaml"),
            "--config",
            str(config),
            "--start",
            "2026-01-01T12:00:07Z",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    (pod,) = json.loads(out.stdout)["pods"]
    assert (pod["name"], pod["node"], pod["boundAt"]) == ("backup", "node-1", "2026-01-01T22:00:00Z")


def test_custom_main_wins_over_an_installed_entry_point(tmp_path: Path) -> None:
    """After ``pip install`` of the guide's package (or with a leftover .egg-info), the custom main
    registers the same name: its own registration wins, the entry point is shadowed with a warning
    (it used to fail with ``a plugin named TransferWindow already exists``, exit 2)."""
    site = tmp_path / "site"
    dist = site / "transfer_window_plugin-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: transfer-window-plugin\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\nTransferWindow = transfer_window:TransferWindow\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- plugins:\n"
        "    multiPoint:\n"
        "      enabled: [{name: PrioritySort}, {name: TransferWindow}, {name: DefaultBinder}]\n"
        "      disabled: [{name: '*'}]\n"
        "  pluginConfig:\n"
        "  - {name: TransferWindow, args: {windowStart: '22:00', windowEnd: '06:00'}}\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(EXAMPLES), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "my_scheduler.py"), "simulate", str(EXAMPLES / "cluster.yaml"),
         "--config", str(config), "--start", "2026-01-01T12:00:07Z", "-o", "json", "-v", "2"],
        capture_output=True, text=True, check=False, env=env,
    )
    assert out.returncode == 0, out.stderr
    (pod,) = json.loads(out.stdout)["pods"]
    assert (pod["name"], pod["node"], pod["boundAt"]) == ("backup", "node-1", "2026-01-01T22:00:00Z")
    assert "shadows an existing plugin" in out.stderr


def test_guide_quotes_the_example_files_verbatim() -> None:
    sources = [*(EXAMPLES.glob("*.py")), *(EXAMPLES.glob("*.toml")), *(EXAMPLES.glob("*.yaml"))]
    sources.append(ROOT / "tests" / "docs" / "test_plugin_guide.py")
    text = "\n".join(p.read_text() for p in sources)
    guide = (ROOT / "docs" / "plugin-guide.md").read_text()
    blocks = re.findall(r"```(?:python|toml|yaml)\n(.*?)```", guide, flags=re.DOTALL)
    assert len(blocks) >= 8
    for block in blocks:
        assert block in text, f"the guide quotes code that is in no example file:\n{block}"
