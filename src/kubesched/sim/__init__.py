"""The simulated world: reading manifests and traces (Alibaba GPU), driving a simulation on the
virtual clock, Go's random generator, and the reports of ``simulate``, ``explain`` and ``trace``.

What belongs here: everything only a simulation uses. May import every layer up to the scheduler
(``api``, ``config``, ``framework``, ``plugins``, ``backend``, ``scheduler``, ``cluster``); never
``kube``, ``bench``, ``cli`` or ``testing``.
"""
