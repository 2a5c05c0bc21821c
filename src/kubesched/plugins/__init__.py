"""The in-tree plugins, one package per upstream plugin (``pkg/scheduler/framework/plugins``) plus the
out-of-tree ones kubesched ships (coscheduling, capacity scheduling, GPU sharing, tenancy...), their
names and the in-tree registry.

What belongs here: a plugin, its args handling and helpers only plugins use. A plugin may import
``api``, ``config`` and ``framework``, never ``backend``, the scheduler, ``cluster``, ``sim`` or
``kube``; the imports of ``sim`` left here are listed in tests/test_layers.py.
"""
