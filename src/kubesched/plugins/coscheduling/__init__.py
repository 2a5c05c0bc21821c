"""Coscheduling: gang scheduling with scheduler-plugins' PodGroup (see plugin.py, docs/gang.md)."""

from .args import CoschedulingArgs
from .plugin import Coscheduling
from .podgroup import API_VERSION, KIND, POD_GROUP_LABEL

__all__ = ["API_VERSION", "KIND", "POD_GROUP_LABEL", "Coscheduling", "CoschedulingArgs"]
