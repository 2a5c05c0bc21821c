"""SchedulingGates."""

from .scheduling_gates import SchedulingGates

__all__ = ["SchedulingGates"]
