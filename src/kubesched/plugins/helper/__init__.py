"""Helpers shared by several plugins (upstream ``pkg/scheduler/framework/plugins/helper``)."""

from .normalize_score import default_normalize_score, default_normalize_score_batch

__all__ = ["default_normalize_score", "default_normalize_score_batch"]
