"""kubesched: kube-scheduler's Scheduling Framework in Python."""

__version__ = "0.1.0"
