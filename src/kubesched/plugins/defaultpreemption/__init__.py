"""DefaultPreemption."""

from .default_preemption import DefaultPreemption

__all__ = ["DefaultPreemption"]
