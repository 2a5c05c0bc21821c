"""PrioritySort."""

from .priority_sort import PrioritySort

__all__ = ["PrioritySort"]
