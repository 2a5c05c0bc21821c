"""The simulated world: the in-process cluster on a virtual clock (``cluster``), reading manifests
and traces (Alibaba GPU), driving a simulation, the standalone GPU replay (``gpu_replay``), and the
reports of ``simulate``, ``explain`` and ``trace``.

What belongs here: everything only a simulation uses. May import every layer up to the scheduler
(``api``, ``config``, ``framework``, ``plugins``, ``backend``, ``scheduler``); never ``kube``,
``bench``, ``cli`` or ``testing``. ``cluster`` implements ``framework.cluster.ClusterBackend`` and
never imports the scheduler: the scheduler registers its event handlers with it.
"""
