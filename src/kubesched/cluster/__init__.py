"""Cluster backends: the only part that differs between a real cluster and a simulation."""
