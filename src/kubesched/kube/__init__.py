"""The real-cluster world: connection config (kubeconfig, exec credentials), a rate-limited JSON
client, informers (list + watch), the backend (``cluster``), an events.k8s.io recorder, Lease leader
election, the health/metrics server, ``kubesched run`` (``run``) and the etcd + kube-apiserver
harness of our tests and benchmarks (``controlplane``, behind the ``kubesched[controlplane]`` extra).

Everything speaks the API server's JSON as plain dicts (no generated models), over one ``httpx``
connection pool; see docs/architecture.md, "The Kubernetes backend". What belongs here: everything
only the real-cluster side uses. May import every layer up to the scheduler (``api``, ``config``,
``framework``, ``plugins``, ``backend``, ``scheduler``); never ``sim``, ``bench``, ``cli`` or
``testing``. ``cluster`` never imports the scheduler: the scheduler registers its handlers with it.
"""
