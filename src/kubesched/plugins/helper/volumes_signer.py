"""The pod signature of the volume plugins (OpportunisticBatching).

Upstream's VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits all sign a pod with
one fragment, ``VolumesSigner(pod)``: its volume sources other than ConfigMaps and Secrets
(``kube-scheduler/framework/signers.go``, v1.35-v1.37)."""

from __future__ import annotations

from typing import ClassVar

from kubesched.framework import signature as sign
from kubesched.framework.signature import SignFragment
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo


class VolumesSigner:
    """Mixin: ``sign_pod`` as upstream's volume plugins have it."""

    #: sign_pod reads only the spec (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Results depend only on the pod's volumes other than ConfigMaps and Secrets."""
        return [SignFragment(sign.VOLUMES_SIGNER, sign.volumes(pod))], None
