"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate.

Entry point: :func:`load_config`. Types mirror upstream's v1 API with snake_case
attributes; plugin args are dataclasses decoded strictly (:mod:`.args`). What belongs here: the
configuration file and the plugin args, nothing that runs a plugin; it imports only ``api``.
"""

from .args import decode_args, describe_args
from .defaults import default_plugins, merge_plugin_set, merge_plugins, set_defaults
from .duration import parse_duration
from .errors import ConfigError, FieldError
from .load import config_to_dict, load_config, loads_config
from .plugin_args import IN_TREE_ARGS
from .types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    ClientConnection,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from .validation import validate_configuration, validate_plugin_names

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "IN_TREE_ARGS",
    "KIND",
    "ClientConnection",
    "ConfigError",
    "FieldError",
    "KubeSchedulerConfiguration",
    "LeaderElectionConfiguration",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "config_to_dict",
    "decode_args",
    "default_plugins",
    "describe_args",
    "load_config",
    "loads_config",
    "merge_plugin_set",
    "merge_plugins",
    "parse_duration",
    "set_defaults",
    "validate_configuration",
    "validate_plugin_names",
]
