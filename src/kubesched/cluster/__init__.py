"""Cluster backends: the only part that differs between a real cluster and a simulation.

What belongs here: one backend per world and their common contract. ``base`` is the contract the
scheduler core programs against (listing, binding, events, the bind conflict error) and sits in the
layer of ``plugins`` and ``backend``; ``sim`` (the in-process API server on a virtual clock) and
``kube`` (informers, the binding subresource) implement it, each importing only its own world
(``sim/`` or ``kube/``) and the layers below. The scheduler registers with a backend, not the other
way round; the imports of ``Scheduler`` left here are listed in tests/test_layers.py.
"""
