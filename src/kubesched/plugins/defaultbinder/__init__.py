"""DefaultBinder."""

from .default_binder import DefaultBinder

__all__ = ["DefaultBinder"]
