"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as dataclasses.

Mirrors ``staging/src/k8s.io/kube-scheduler/config/v1/types.go`` and the component-base
``LeaderElectionConfiguration`` / ``ClientConnectionConfiguration`` it embeds.
Attributes are snake_case; the YAML keys are upstream's camelCase (see ``args.field_key``).
Durations are float seconds. Defaults here are the *defaulted* values of
``pkg/scheduler/apis/config/v1/defaults.go``, so a hand-built object is usable as is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .releases import DEFAULT_RELEASE, Release

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "KIND",
    "ClientConnection",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "KubeSchedulerConfiguration",
    "LeaderElectionConfiguration",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
#: ``v1.DefaultSchedulerName`` (k8s.io/api/core/v1).
DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass
class PluginRef:
    """``v1.Plugin``: a plugin name and, for Score plugins, its weight (0 = unset, counts as 1)."""

    name: str
    weight: int = field(default=0, metadata={"int32": True})


@dataclass
class PluginSet:
    """``v1.PluginSet``: plugins enabled (in order) and default plugins disabled (``"*"`` = all)."""

    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)

    def enabled_names(self) -> list[str]:
        return [p.name for p in self.enabled]

    def disabled_names(self) -> list[str]:
        return [p.name for p in self.disabled]


@dataclass
class Plugins:
    """``v1.Plugins``: one :class:`PluginSet` per extension point, plus ``multi_point``."""

    #: attribute name -> upstream YAML key, in upstream's declaration order.
    EXTENSION_POINTS: ClassVar[dict[str, str]] = {
        "pre_enqueue": "preEnqueue",
        "queue_sort": "queueSort",
        "pre_filter": "preFilter",
        "filter": "filter",
        "post_filter": "postFilter",
        "pre_score": "preScore",
        "score": "score",
        "reserve": "reserve",
        "permit": "permit",
        "pre_bind": "preBind",
        "bind": "bind",
        "post_bind": "postBind",
        "multi_point": "multiPoint",
    }

    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def get(self, point: str) -> PluginSet:
        """The set for an attribute name (``"pre_filter"``) or YAML key (``"preFilter"``)."""
        if point in self.EXTENSION_POINTS:
            return getattr(self, point)  # type: ignore[no-any-return]
        for attr, key in self.EXTENSION_POINTS.items():
            if key == point:
                return getattr(self, attr)  # type: ignore[no-any-return]
        raise KeyError(point)

    def items(self) -> list[tuple[str, PluginSet]]:
        """``(attribute name, set)`` for every extension point, multi_point last."""
        return [(attr, getattr(self, attr)) for attr in self.EXTENSION_POINTS]


@dataclass
class PluginConfig:
    """``v1.PluginConfig``: args for one plugin, typed when the plugin's args type is known."""

    name: str
    #: the args dataclass instance for plugins with a known args type, else the raw mapping.
    args: object = None


@dataclass
class Profile:
    """``v1.KubeSchedulerProfile``."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    #: None = use the global value.
    percentage_of_nodes_to_score: int | None = field(default=None, metadata={"int32": True})
    plugins: Plugins = field(default_factory=Plugins)
    plugin_config: list[PluginConfig] = field(default_factory=list)
    #: Where the profile was read from (``"cfg.yaml: profiles[0]"``), set by the loader so that a
    #: plugin failing at Framework construction is reported at its place in the file; not a field
    #: of the API (``init=False``: never decoded or encoded, and ignored by ``==``).
    origin: str = field(default="", init=False, compare=False, repr=False)

    def args_for(self, name: str) -> object | None:
        """The args configured for plugin ``name`` (first entry), or None."""
        for pc in self.plugin_config:
            if pc.name == name:
                return pc.args
        return None


@dataclass
class LeaderElectionConfiguration:
    """component-base ``LeaderElectionConfiguration`` with kube-scheduler's defaults (seconds)."""

    leader_elect: bool = True
    lease_duration: float = field(default=15.0, metadata={"duration": True})
    renew_deadline: float = field(default=10.0, metadata={"duration": True})
    retry_period: float = field(default=2.0, metadata={"duration": True})
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class ClientConnection:
    """component-base ``ClientConnectionConfiguration`` with kube-scheduler's qps/burst defaults."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = field(default=100, metadata={"int32": True})


@dataclass
class ExtenderManagedResource:
    """``v1.ExtenderManagedResource`` (schema for strict decoding of ``extenders[]``)."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass
class ExtenderTLSConfig:
    """``v1.ExtenderTLSConfig``; the ``*Data`` fields are base64 strings in YAML."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = field(default="", metadata={"key": "caFile"})
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = field(default="", metadata={"key": "caData"})


@dataclass
class Extender:
    """``v1.Extender``: used to check ``extenders[]`` strictly; the config keeps them as raw dicts."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = field(default=False, metadata={"key": "enableHTTPS"})
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = field(default=0.0, metadata={"duration": True})
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = field(default_factory=list)
    ignorable: bool = False


@dataclass
class KubeSchedulerConfiguration:
    """``v1.KubeSchedulerConfiguration`` (defaults applied by ``defaults.set_defaults``)."""

    parallelism: int = field(default=16, metadata={"int32": True})
    leader_election: LeaderElectionConfiguration = field(default_factory=LeaderElectionConfiguration)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    #: 0 = adaptive (5%..50% depending on cluster size); None only before defaulting.
    percentage_of_nodes_to_score: int | None = field(default=0, metadata={"int32": True})
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[Profile] = field(default_factory=list)
    #: kept as the raw YAML mappings (validated like upstream's ``validateExtenders``).
    extenders: list[dict[str, Any]] = field(default_factory=list)
    delay_cache_until_active: bool = False
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    #: The kube-scheduler release it was defaulted and validated as (``--emulated-version``); not
    #: a field of the file.
    release: Release = field(default=DEFAULT_RELEASE, init=False, compare=False, repr=False)

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile serving pods with ``spec.schedulerName == scheduler_name``."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None
