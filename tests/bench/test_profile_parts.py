"""scripts/profile-parts.py: which samples count (the measured phase only) and where each is
charged (the innermost frame of a part; the loop's own frames only when nothing else matches).
The stacks are written by hand in py-spy's raw format: ``frame;frame;... count``, root first."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("profile_parts", ROOT / "scripts" / "profile-parts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOT_FRAMES = "<module> (<string>:9);run_bench (kubesched/bench/harness.py:72)"
LOOP = (
    "Simulation.run (kubesched/sim/simulation.py:82);"
    "ScheduleOneMixin.schedule_one (kubesched/scheduler/schedule_one.py:100)"
)


def _stack(run_sim_line: int, *frames: str, count: int) -> str:
    return ";".join([ROOT_FRAMES, f"run_sim (kubesched/bench/sim.py:{run_sim_line})", LOOP, *frames]) + f" {count}"


def test_setup_samples_are_left_out_and_each_sample_goes_to_its_innermost_part() -> None:
    charge = _script().charge
    raw = "\n".join([
        # Before the clock (line 95 < 107): building the cluster, not counted.
        _stack(95, "Framework.run_score_plugins (kubesched/framework/runtime.py:873)", count=50),
        # Score, with a plugin's own frame below it (the plugin is not a part: Score gets it).
        _stack(112, "ScheduleOneMixin.prioritize_nodes (kubesched/scheduler/schedule_one.py:386)",
               "Fit.score_batch (kubesched/plugins/noderesources/fit.py:200)", count=7),
        # A histogram observed inside Filter: metrics, the innermost part.
        _stack(112, "Framework.run_filter_plugins (kubesched/framework/runtime.py:770)",
               "PluginDurations.observe (kubesched/metrics.py:190)", count=3),
        # The cycle's own code between the parts.
        _stack(112, "ScheduleOneMixin.scheduling_cycle (kubesched/scheduler/schedule_one.py:132)", count=2),
        # The simulator's loop itself (only the loop frames on the stack).
        ";".join([ROOT_FRAMES, "run_sim (kubesched/bench/sim.py:112)",
                  "Simulation.run (kubesched/sim/simulation.py:90)"]) + " 4",
        # Not a stack through run_sim (an import at start-up), and a malformed line.
        "<module> (<string>:3);<module> (kubesched/bench/__init__.py:10) 9",
        "garbage",
    ])
    parts = charge(raw, 107)
    assert dict(parts) == {
        "Score and NormalizeScore": 7,
        "metrics": 3,
        "scheduling cycle, rest": 2,
        "simulator (clock, store, pod creation)": 4,
    }


def test_preemption_takes_its_own_filter_calls() -> None:
    """PostFilter is an outer part: the dry run's Filter calls and metrics count as PostFilter."""
    charge = _script().charge
    post = "Framework.run_post_filter_plugins (kubesched/framework/runtime.py:810)"
    raw = "\n".join([
        _stack(112, post, "run_filter_plugins (kubesched/framework/filtering.py:85)", count=5),
        _stack(112, post, "PluginDurations.observe (kubesched/metrics.py:190)", count=2),
        _stack(112, "Framework.run_filter_plugins (kubesched/framework/runtime.py:770)", count=3),
    ])
    assert dict(charge(raw, 107)) == {"PostFilter (preemption's dry run, victims)": 7, "Filter": 3}
