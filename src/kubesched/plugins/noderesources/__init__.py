"""NodeResourcesFit and NodeResourcesBalancedAllocation."""

from .fit import Fit

__all__ = ["Fit"]
