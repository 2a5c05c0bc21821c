"""The scheduler's own state, as upstream's ``pkg/scheduler/backend``: the scheduling queue (activeQ,
backoffQ, unschedulable pods) and the cache of nodes, bound and assumed pods with its node tree.

What belongs here: in-memory bookkeeping the scheduling cycle reads and updates, nothing that talks
to a cluster (that is ``cluster/``). May import ``api``, ``config`` and ``framework``; never
``plugins``, the scheduler or anything above it.
"""
