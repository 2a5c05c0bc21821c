"""Talking to a real kube-apiserver: connection config, a rate-limited JSON client, informers
(list + watch), an events.k8s.io recorder, Lease leader election and the health/metrics server.

Everything speaks the API server's JSON as plain dicts (no generated models), over one
``httpx`` connection pool; see docs/architecture.md, "The Kubernetes backend". What belongs here:
everything only the real-cluster side uses. May import every layer up to the scheduler (``api``,
``config``, ``framework``, ``plugins``, ``backend``, ``scheduler``); never ``sim``, ``bench``,
``cli`` or ``testing``.
"""
