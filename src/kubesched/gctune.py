"""Garbage-collector settings for a long-running scheduler process."""

from __future__ import annotations

import gc

#: (gen0, gen1, gen2) thresholds; CPython's defaults are (700, 10, 10).
THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Run the cyclic collector less often.

    A scheduler holds tens of thousands of long-lived objects (pod and node dicts, their parsed
    views) and allocates many short-lived ones per cycle. With the default gen0 threshold of 700 the
    collector runs thousands of times a second and its older generations rescan that whole heap:
    about a tenth of a SchedulingBasic run at 5000 nodes. Almost all of our garbage is acyclic and
    freed by reference counting, so collecting rarely costs little memory (the approach long-running
    Python services take).
    """
    gc.set_threshold(*THRESHOLDS)
