"""CapacityScheduling: ElasticQuota min/max per namespace, with borrowing and reclaim by
preemption (scheduler-plugins' plugin of the same name). See docs/tenancy.md."""

from .elasticquota import API_VERSION, KIND, ElasticQuotaInfo, ElasticQuotaInfos, InvalidElasticQuotaError
from .plugin import CapacityScheduling, CapacitySchedulingArgs

__all__ = [
    "API_VERSION",
    "KIND",
    "CapacityScheduling",
    "CapacitySchedulingArgs",
    "ElasticQuotaInfo",
    "ElasticQuotaInfos",
    "InvalidElasticQuotaError",
]
