"""Names and messages are printed literally (issue 11, "Names printed literally"): console markup
in a name is not interpreted, and control characters are escaped rather than sent to the terminal."""

from __future__ import annotations

from rich.console import Console

from kubesched.config.load import load_config
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import ClusterObjects, admit_pod
from kubesched.sim.report import print_simulation
from kubesched.sim.runner import simulate
from kubesched.testing import make_node, make_pod


def render(objects: ClusterObjects) -> str:
    for p in objects.pods:
        admit_pod(p, {}, 0)
    result = simulate(objects, load_config(None), default_registry())
    console = Console(record=True, width=200, color_system=None)
    print_simulation(result, console)
    return console.export_text()


def test_markup_and_escape_sequences_in_names_and_messages() -> None:
    gated = make_pod("gated").obj()
    gated["spec"]["schedulingGates"] = [{"name": "g"}]
    objects = ClusterObjects(
        nodes=[make_node("n1").capacity(cpu="4", memory="8Gi").obj()],
        pods=[make_pod("[/]x\x1b[31mred").req(cpu="1").obj(), gated],
    )
    text = render(objects)
    assert "default/[/]x\\x1b[31mred" in text  # the name as written, the ESC byte escaped
    assert "\x1b" not in text
    # upstream scheduling_gates.go: fmt's %v of the gate names, "[g]" (rich markup would eat it)
    assert "waiting for scheduling gates: [g]" in text
