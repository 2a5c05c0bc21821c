"""The ``kubesched`` command line.

Flags follow kube-scheduler's names where they exist (``--config``, ``--kubeconfig``, ``-v``).
Bad input (configuration, manifests) gives one line per problem naming the file and field, and
exit code 2 — never a traceback.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console

from kubesched import __version__
from kubesched.api.text import printable
from kubesched.config.errors import ConfigError
from kubesched.config.feature_gates import FeatureGates
from kubesched.config.releases import Release
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import rfc3339
from kubesched.framework.registry import Registry, RegistryError, load_entry_points
from kubesched.framework.runtime import FrameworkError
from kubesched.gctune import tune_gc
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import ManifestError, load_manifests, load_pod_file, parse_time_or_offset

EXIT_BAD_INPUT = 2

#: Factories registered by a user's own ``main`` (``new_scheduler_command(with_plugin(...))``).
_EXTRA_PLUGINS: list[tuple[str, Callable[..., Any]]] = []


def _stderr_prefix(word: str, colour: str) -> str:
    """``error:`` / ``warning:``, coloured only on a terminal that wants colour (NO_COLOR)."""
    if sys.stderr.isatty() and not os.environ.get("NO_COLOR"):
        return f"\x1b[{colour}m{word}:\x1b[0m"
    return f"{word}:"


def _print_problems(word: str, colour: str, messages: Sequence[object]) -> None:
    """One line per problem on stderr, written as is: never wrapped or elided to the terminal's
    width, never read as console markup, control characters escaped."""
    prefix = _stderr_prefix(word, colour)
    lines = [line for m in messages for line in (str(m).splitlines() or [""])]
    sys.stderr.write("".join(f"{prefix} {printable(line)}\n" for line in lines))
    sys.stderr.flush()


def _report_warnings(warnings: Sequence[str]) -> None:
    """The loader's warnings name file and line; the core's log lines about the same invalid
    objects (logger ``kubesched.invalid``) would only repeat them."""
    _warn(warnings)
    if warnings:
        logging.getLogger("kubesched.invalid").setLevel(logging.ERROR)


def _fail(messages: Sequence[object]) -> NoReturn:
    _print_problems("error", "1;31", messages)
    sys.exit(EXIT_BAD_INPUT)


def _warn(messages: Sequence[object]) -> None:
    if messages:
        _print_problems("warning", "1;33", messages)


def _emit(data: object, output: str, *, indent: int | None = 2) -> None:
    """``-o json`` or ``-o yaml``: the same document, in the keys' own order."""
    if output == "yaml":
        import yaml

        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), nl=False)
    else:
        click.echo(json.dumps(data, indent=indent))


def _registry() -> Registry:
    """In-tree plugins, then those of ``new_scheduler_command(with_plugin(...))`` (a clash with an
    in-tree name is an error, as upstream's WithPlugin), then installed entry points: a user's own
    registration wins over an installed package's plugin of the same name (shadowed, with a
    warning), so a leftover install cannot break a user's main."""
    reg = default_registry(entry_points=False)
    for name, factory in _EXTRA_PLUGINS:
        try:
            reg.register(name, factory, origin="main")
        except RegistryError as err:
            _fail([str(err)])
    load_entry_points(reg)
    return reg


def _load_config(path: str | None, reg: Registry, release: Release | None = None) -> KubeSchedulerConfiguration:
    from kubesched.config.load import load_config
    from kubesched.config.releases import DEFAULT_RELEASE

    try:
        # With the registry's names, unknown or repeated plugins come out with the other problems.
        return load_config(
            path, args_types=reg.args_types(), registered=set(reg), release=release or DEFAULT_RELEASE
        )
    except ConfigError as err:
        prefix = f"{path}: " if path else ""
        _fail([f"{prefix}{e}" for e in err.errors])


def _setup_logging(verbosity: int, logging_format: str = "text") -> None:
    """klog's text (or JSON) format on stderr; the offline commands show warnings at -v 0."""
    from kubesched.kube import klog

    klog.setup(verbosity, logging_format)
    if verbosity <= 0:
        logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("kubesched.invalid").setLevel(logging.NOTSET)  # see _report_warnings


class _KubeschedGroup(click.Group):
    """click, with its usage errors in our format: one ``error:`` line naming the option and the
    command's help, instead of click's usage block (several lines, the problem on the last)."""

    def main(
        self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
        standalone_mode: bool = True, **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as err:
            where = err.ctx.command_path if err.ctx is not None else "kubesched"
            _print_problems("error", "1;31", [f"{err.format_message()} (see '{where} --help')"])
            sys.exit(err.exit_code)
        except click.ClickException as err:
            _print_problems("error", "1;31", [err.format_message()])
            sys.exit(err.exit_code)
        except click.Abort:
            sys.stderr.write("Aborted!\n")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=_KubeschedGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="kubesched")
def cli() -> None:
    """kubesched: kube-scheduler's Scheduling Framework in Python."""
    tune_gc()


START_HELP = "Virtual clock start (RFC 3339). Default: 2026-01-01T00:00:00Z."


def _emulated_version(ctx: click.Context, param: click.Parameter, value: str | None) -> Release | None:
    if value is None:
        return None
    from kubesched.config.releases import ReleaseError, parse_emulated_version

    try:
        return parse_emulated_version(value)
    except ReleaseError as err:
        raise click.BadParameter(str(err).removeprefix("--emulated-version: ")) from None


def _emulated_version_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--emulated-version``: the kube-scheduler release to behave as (docs/releases.md)."""
    from kubesched.config.releases import DEFAULT_RELEASE, RELEASES

    return click.option(
        "--emulated-version",
        "release",
        default=None,
        callback=_emulated_version,
        metavar="[kube=]MAJOR.MINOR",
        help=f"Behave as kube-scheduler of this release: {', '.join(map(str, RELEASES))} "
             f"(default {DEFAULT_RELEASE}): its defaults, feature gates and decisions.",
    )(fn)


def _verbosity_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """kube-scheduler's ``-v`` (``-v 2``, ``-v=2``, ``--v=2``) and ``--logging-format``, the same on
    every command."""
    fn = click.option("--logging-format", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="Log format on stderr: klog's text, or JSON.")(fn)
    return click.option(
        "-v", "--v", "verbosity", default="0", metavar="N", callback=lambda c, p, v: _verbosity(c, p, v),
        help="Log verbosity, as kube-scheduler's -v (also -v=2); 2 logs every decision.",
    )(fn)


def _scenario_config(paths: Sequence[str], config_path: str | None) -> tuple[str | None, set[Path]]:
    """``--config``, else the scenario's own KubeSchedulerConfiguration (said on stderr); and the
    files that are configurations, which are never read as manifests."""
    from kubesched.sim.manifests import find_scheduler_configs

    found = find_scheduler_configs(paths)
    skip = set(found)
    if config_path is not None:
        skip.add(Path(config_path).resolve())
        return config_path, skip
    if len(found) > 1:
        _fail([f"{', '.join(map(str, found))}: more than one KubeSchedulerConfiguration in the scenario; "
               "choose one with --config"])
    if found:
        shown = next((p for p in paths if Path(p).resolve() == found[0]), None) or os.path.relpath(found[0])
        _print_problems("note", "1;36", [f"using the scenario's configuration {shown} (--config to choose another)"])
        return str(found[0]), skip
    return None, skip


def _feature_gates_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--feature-gates``, kube-scheduler's flag (docs/releases.md)."""
    return click.option(
        "--feature-gates", "feature_gates", multiple=True, metavar="[kube:]KEY=BOOL,...",
        help="The feature gates of the --emulated-version release, validated as its kube-scheduler does "
        "(e.g. OpportunisticBatching=false).",
    )(fn)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--config", "config_path", type=click.Path(), help="KubeSchedulerConfiguration file.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for tie-breaks (deterministic runs).")
@click.option("--start", default=None, help=START_HELP)
@click.option("--until", default=None, help="Stop at this time (RFC 3339) or after this long (e.g. 12h).")
@click.option(
    "--tie-break",
    type=click.Choice(["random", "node-order"]),
    default="random",
    show_default=True,
    help="Among equally scored nodes: random as kube-scheduler, or the first in node order.",
)
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a self-contained HTML report (timelines, utilisation, every pod's story) here.")
@_verbosity_option
@_emulated_version_option
@_feature_gates_option
def simulate(
    paths: tuple[str, ...],
    config_path: str | None,
    seed: int,
    start: str | None,
    until: str | None,
    tie_break: str,
    output: str,
    report_path: str | None,
    verbosity: int,
    logging_format: str,
    release: Release | None,
    feature_gates: tuple[str, ...],
) -> None:
    """Schedule the pods in PATHS (YAML files or folders) on a simulated cluster with a virtual clock.

    A KubeSchedulerConfiguration among PATHS is the scenario's configuration when --config is
    not given."""
    from kubesched.config.releases import DEFAULT_RELEASE
    from kubesched.sim.runner import DEFAULT_START, ArrivalError
    from kubesched.sim.runner import simulate as run_sim

    _setup_logging(verbosity, logging_format)
    gates = _feature_gates(feature_gates, release or DEFAULT_RELEASE)
    reg = _registry()
    config_path, skip = _scenario_config(paths, config_path)
    config = _load_config(config_path, reg, release)
    start_ts, until_ts = _time_window(start, until, DEFAULT_START)
    try:
        objects = load_manifests(paths, skip=skip)
    except ManifestError as err:
        _fail(err.errors)
    _report_warnings(objects.warnings)
    if not objects.pods and not objects.nodes:
        _fail([f"no Nodes or Pods found in {', '.join(paths)}"])
    try:
        result = run_sim(
            objects, config, reg, seed=seed, start=start_ts, until=until_ts, tie_break=tie_break, feature_gates=gates
        )
    except (FrameworkError, ArrivalError) as err:
        _fail([str(err)])
    if report_path is not None:
        from kubesched.sim.html_report import render_report

        try:
            Path(report_path).write_text(render_report(result, f"kubesched simulate {' '.join(paths)}"), "utf-8")
        except OSError as err:
            _fail([f"--report: {report_path}: {err.strerror or err}"])
    if output != "table":
        _emit(result.to_json(), output)
        return
    from kubesched.sim.report import print_simulation

    print_simulation(result, Console())


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--pod",
    "pod_ref",
    required=True,
    help="The pod to explain: a YAML file (a pod not in the scenario), or NAMESPACE/NAME of a pod of the scenario.",
)
@click.option("--at", "at", default=None,
              help="Explain as of this time (RFC 3339, or a duration after the start): the scenario runs until then.")
@click.option("--attempt", type=click.IntRange(min=1), default=None,
              help="With --pod NAMESPACE/NAME: explain this attempt (1 is the first) instead of the last.")
@click.option("--start", default=None, help=START_HELP)
@click.option("--config", "config_path", type=click.Path(), help="KubeSchedulerConfiguration file.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for tie-breaks between equally scored nodes (the same answer on every run).")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@_verbosity_option
@_emulated_version_option
def explain(
    paths: tuple[str, ...],
    pod_ref: str,
    at: str | None,
    attempt: int | None,
    start: str | None,
    config_path: str | None,
    seed: int,
    output: str,
    verbosity: int,
    logging_format: str,
    release: Release | None,
) -> None:
    """Explain one scheduling cycle of a pod on the cluster in PATHS: every plugin, every node.

    --pod FILE explains a pod that is not in the scenario, on the cluster as it is at the start
    (its pending pods in the queue, not on nodes) or, with --at, as the scenario has it then.
    --pod NAMESPACE/NAME explains a pod of the scenario in its last scheduling attempt (by --at),
    with that attempt's outcome (bound, or why not, and preemption's victims). A
    KubeSchedulerConfiguration among PATHS is the scenario's configuration when --config is not
    given."""
    from kubesched.explain import explain as run_explain
    from kubesched.sim.explain_pod import ScenarioPodError, explain_pod_at, explain_scenario_pod
    from kubesched.sim.runner import DEFAULT_START, ArrivalError, arrival_time, check_durations
    from kubesched.sim.simulation import new_simulation

    _setup_logging(verbosity, logging_format)
    reg = _registry()
    config_path, skip = _scenario_config(paths, config_path)
    config = _load_config(config_path, reg, release)
    start_ts, at_ts = _time_window(start, at, DEFAULT_START, flag="--at")
    pod_file = _pod_file(pod_ref)
    if pod_file is not None:
        skip.add(pod_file.resolve())
        if attempt is not None:
            _fail(["--attempt: only with --pod NAMESPACE/NAME (a pod of the scenario)"])
    try:
        objects = load_manifests(paths, skip=skip)
        pod = load_pod_file(pod_file, objects) if pod_file is not None else None
    except ManifestError as err:
        _fail(err.errors)
    _report_warnings(objects.warnings)
    try:
        if pod is None:
            out = explain_scenario_pod(
                objects, config, reg, _pod_key(pod_ref), start=start_ts, at=at_ts, attempt=attempt, seed=seed
            )
        elif at_ts is not None:
            out = explain_pod_at(objects, config, reg, pod, start=start_ts, at=at_ts, seed=seed)
        else:
            check_durations(objects.pods)
            sim = new_simulation(config, reg, start=start_ts, seed=seed)
            # The cluster at the start: bound pods on their nodes, the others pending in the queue
            # (arrivals later than the start have not happened).
            sim.cluster.load(objects, arrival_time(start_ts))
            out = run_explain(sim.scheduler, pod)
    except (FrameworkError, ArrivalError, ScenarioPodError) as err:
        _fail([str(err)])
    except ValueError as err:
        _fail([str(err)])
    if output != "table":
        _emit(out, output)
        return
    from kubesched.sim.report import print_explain

    print_explain(out, Console())


_POD_KEY = re.compile(r"(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)/)?([a-z0-9]([-a-z0-9.]*[a-z0-9])?)")


def _pod_file(ref: str) -> Path | None:
    """``--pod``: an existing file, else None for a NAMESPACE/NAME (a missing ``.yaml``/``.json``
    path is an error rather than a pod name)."""
    path = Path(ref)
    if path.is_file():
        return path
    if path.suffix.lower() in (".yaml", ".yml", ".json") or not _POD_KEY.fullmatch(ref):
        _fail([f"--pod: {ref}: no such file, and not a NAMESPACE/NAME of a pod"])
    return None


def _pod_key(ref: str) -> str:
    """NAMESPACE/NAME, or NAME in the default namespace."""
    return ref if "/" in ref else f"default/{ref}"


def _time_window(
    start: str | None, until: str | None, default_start: float, flag: str = "--until"
) -> tuple[float, float | None]:
    """``--start`` (an RFC 3339 time) and ``--until`` (a time, or a duration after the start)."""
    from kubesched.sim.timeparse import parse_rfc3339

    try:
        start_ts = parse_rfc3339(start) if start is not None else default_start
    except ValueError as err:
        _fail([f"--start: {err}"])
    if until is None:
        return start_ts, None
    try:
        until_ts = parse_time_or_offset(until, start_ts)
    except ValueError as err:
        _fail([f"{flag}: {err}"])
    if until_ts < start_ts:
        _fail([f"{flag}: {until!r} is before --start ({rfc3339(start_ts)})"])
    return start_ts, until_ts


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from kubesched.config.duration import parse_duration

    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


def _verbosity(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """klog's ``-v=2`` as well as ``-v 2`` (click reads ``=2`` as the value of a short option);
    klog's Level is an int32."""
    text = value.removeprefix("=")
    try:
        level = int(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a valid integer") from None
    if not 0 <= level <= 2**31 - 1:
        raise click.BadParameter(f"{text!r} is not a verbosity level (0 to 2147483647)")
    return level


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def _ip_address(ctx: click.Context, param: click.Parameter, value: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.ip_address(value.strip("[]")))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an IP address") from None


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _feature_gates(values: tuple[str, ...], release: Release) -> FeatureGates:
    """``--feature-gates`` as kube-scheduler ``release`` checks it; its GA/deprecated warnings
    logged as upstream's, and the gates kubesched ignores named in one warning."""
    from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates

    try:
        gates = parse_feature_gates(values, str(release))
    except FeatureGateError as err:
        _fail([f"--feature-gates: {e}" for e in err.errors])
    log = logging.getLogger("kubesched.featuregate")
    for warning in gates.warnings:
        log.warning("%s", warning)
    ignored = gates.without_effect()
    if ignored:
        log.warning("Feature gates without effect in kubesched (it behaves as kube-scheduler %s with every gate "
                    "at its default): %s", release, ", ".join(ignored))
    return gates


def _write_config(path: str, config: KubeSchedulerConfiguration) -> NoReturn:
    """``--write-config-to``: the defaulted configuration (flags applied) as YAML, then exit 0
    without connecting, as kube-scheduler's ``LogOrWriteConfig``."""
    import yaml

    from kubesched.config.load import config_to_dict
    from kubesched.kube.klog import info_s, v

    try:
        with open(path, "w", encoding="utf-8") as fh:
            yaml.safe_dump(config_to_dict(config), fh, sort_keys=False)
    except OSError as err:
        _fail([f"--write-config-to: {path}: {err.strerror or err}"])
    info_s(logging.getLogger("kubesched.kube.run"), v(0), "Wrote configuration", file=path)
    sys.exit(0)


@cli.command()
@click.option("--config", "config_path", type=click.Path(), help="KubeSchedulerConfiguration file.")
@click.option(
    "--kubeconfig", default=None, help="Kubeconfig (overrides clientConnection.kubeconfig; in-cluster if neither)."
)
@click.option("--master", default=None,
              help="The address of the Kubernetes API server (overrides any value in kubeconfig).")
@click.option("--write-config-to", default=None, type=click.Path(),
              help="If set, write the configuration values to this file and exit.")
@click.option("--feature-gates", "feature_gates", multiple=True, metavar="[kube:]KEY=BOOL,...",
              help="The feature gates of the --emulated-version release, validated as its kube-scheduler does "
                   "(repeatable); none changes what kubesched does, those set away from their default are named "
                   "in a warning.")
@click.option("--profiling", type=click.BOOL, is_flag=False, flag_value=True, default=None,
              help="Overrides enableProfiling [default: true]; kubesched serves no Go pprof endpoints.")
@click.option("--contention-profiling", type=click.BOOL, is_flag=False, flag_value=True, default=None,
              help="Overrides enableContentionProfiling [default: true]; no effect in kubesched.")
@click.option(
    "--leader-elect",
    type=click.BOOL,
    is_flag=False,
    flag_value=True,
    default=None,
    help="Campaign for a Lease before scheduling (overrides leaderElection.leaderElect).",
)
@click.option(
    "--leader-elect-lease-duration", callback=_duration, help="e.g. 15s (overrides leaderElection.leaseDuration)."
)
@click.option("--leader-elect-renew-deadline", callback=_duration, help="e.g. 10s.")
@click.option("--leader-elect-retry-period", callback=_duration, help="e.g. 2s.")
@click.option("--leader-elect-resource-lock", default=None, help="Only 'leases' is supported.")
@click.option("--leader-elect-resource-name", default=None, help="Lease name (default kube-scheduler).")
@click.option("--leader-elect-resource-namespace", default=None, help="Lease namespace (default kube-system).")
@click.option("--kube-api-qps", type=float, default=None, callback=_finite, help="Overrides clientConnection.qps.")
@click.option("--kube-api-burst", type=click.IntRange(0, 2**31 - 1), default=None,
              help="Overrides clientConnection.burst.")
@click.option(
    "--metrics-bind-address",
    default=None,
    help="HOST:PORT also serving /metrics, /healthz, /livez, /readyz over plain HTTP, unauthenticated "
         "(off unless set; 0 disables).",
)
@click.option("--legacy-metrics", is_flag=True, default=False,
              help="Also expose kube-scheduler v1.14's deprecated scheduler_e2e_scheduling_latency_microseconds "
                   "and scheduler_binding_latency_microseconds (fed by their successors' observations), for "
                   "dashboards written for those releases.")
@click.option("--secure-port", type=click.IntRange(0, 65535), default=10259, show_default=True,
              help="HTTPS port for /metrics and health, with authentication and authorization; 0 disables.")
@click.option("--bind-address", default="0.0.0.0", show_default=True, callback=_ip_address,
              help="IP address to serve --secure-port on.")
@click.option("--cert-dir", default=None, help="Where the self-signed serving certificate is kept "
              "(ignored with --tls-cert-file; none: in memory).")
@click.option("--tls-cert-file", default=None, help="Serving certificate (PEM), with --tls-private-key-file.")
@click.option("--tls-private-key-file", default=None, help="Serving certificate's key (PEM).")
@click.option("--client-ca-file", default=None, help="CA that signs client certificates (user CN, groups O).")
@click.option("--authentication-kubeconfig", default=None,
              help="Kubeconfig for TokenReviews (default: in-cluster; none outside a cluster).")
@click.option("--authorization-kubeconfig", default=None,
              help="Kubeconfig for SubjectAccessReviews (default: in-cluster; none outside a cluster).")
@click.option("--authentication-skip-lookup", is_flag=True, default=False,
              help="Do not read the client CA from kube-system/extension-apiserver-authentication.")
@click.option("--authentication-tolerate-lookup-failure", type=click.BOOL, is_flag=False, flag_value=True,
              default=True, show_default=True, help="A failed client CA lookup is a warning, not an error.")
@click.option("--authorization-always-allow-paths", default="/healthz,/readyz,/livez", show_default=True,
              help="Comma-separated paths served without authorization (a trailing * is a prefix).")
@click.option("--authentication-token-webhook-cache-ttl", callback=_duration,
              help="How long TokenReview answers are cached (default 10s).")
@click.option("--authorization-webhook-cache-authorized-ttl", callback=_duration,
              help="How long allowed SubjectAccessReview answers are cached (default 10s).")
@click.option("--authorization-webhook-cache-unauthorized-ttl", callback=_duration,
              help="How long denied SubjectAccessReview answers are cached (default 10s).")
@click.option(
    "--shutdown-grace-period", callback=_duration, help="How long SIGTERM waits for in-flight bindings (default 30s)."
)
@click.option(
    "-v",
    "--v",
    "verbosity",
    default="0",
    callback=_verbosity,
    help="Log verbosity, as kube-scheduler's -v (also -v=2); 2 logs every decision.",
)
@click.option("--logging-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_emulated_version_option
def run(
    config_path: str | None,
    kubeconfig: str | None,
    master: str | None,
    write_config_to: str | None,
    feature_gates: tuple[str, ...],
    profiling: bool | None,
    contention_profiling: bool | None,
    leader_elect: bool | None,
    leader_elect_lease_duration: float | None,
    leader_elect_renew_deadline: float | None,
    leader_elect_retry_period: float | None,
    leader_elect_resource_lock: str | None,
    leader_elect_resource_name: str | None,
    leader_elect_resource_namespace: str | None,
    kube_api_qps: float | None,
    kube_api_burst: int | None,
    metrics_bind_address: str | None,
    legacy_metrics: bool,
    secure_port: int,
    bind_address: str,
    cert_dir: str | None,
    tls_cert_file: str | None,
    tls_private_key_file: str | None,
    client_ca_file: str | None,
    authentication_kubeconfig: str | None,
    authorization_kubeconfig: str | None,
    authentication_skip_lookup: bool,
    authentication_tolerate_lookup_failure: bool,
    authorization_always_allow_paths: str,
    authentication_token_webhook_cache_ttl: float | None,
    authorization_webhook_cache_authorized_ttl: float | None,
    authorization_webhook_cache_unauthorized_ttl: float | None,
    shutdown_grace_period: float | None,
    verbosity: int,
    logging_format: str,
    release: Release | None,
) -> None:
    """Schedule pods on a real cluster (kube-apiserver), as kube-scheduler does."""
    from dataclasses import replace

    from kubesched.kube import klog
    from kubesched.kube.config import KubeConfigError
    from kubesched.kube.klog import info_s, v
    from kubesched.kube.leaderelection import LeaderElectionError
    from kubesched.kube.run import DEFAULT_METRICS_ADDRESS, RunOptions, SchedulerApp, apply_leader_election_flags

    klog.setup(verbosity, logging_format)
    from kubesched.config.releases import DEFAULT_RELEASE

    gates = _feature_gates(feature_gates, release or DEFAULT_RELEASE)
    if master is not None:
        from kubesched.kube.config import master_url

        try:
            master_url(master, tls=False)
        except KubeConfigError as err:
            _fail([str(err)])
    reg = _registry()
    config = _load_config(config_path, reg, release)
    config.leader_election = apply_leader_election_flags(
        config.leader_election,
        leader_elect=leader_elect,
        lease_duration=leader_elect_lease_duration,
        renew_deadline=leader_elect_renew_deadline,
        retry_period=leader_elect_retry_period,
        resource_lock=leader_elect_resource_lock,
        resource_name=leader_elect_resource_name,
        resource_namespace=leader_elect_resource_namespace,
    )
    if kube_api_qps is not None:
        config.client_connection = replace(config.client_connection, qps=kube_api_qps)
    if kube_api_burst is not None:
        config.client_connection = replace(config.client_connection, burst=kube_api_burst)
    # kube-scheduler's deprecated --profiling and --contention-profiling (DebuggingConfiguration).
    if profiling is not None:
        config.enable_profiling = profiling
    if contention_profiling is not None:
        config.enable_contention_profiling = contention_profiling
    # As kube-scheduler: flags override the file, then the result is validated again.
    from kubesched.config.validation import validate_configuration

    flag_errors = [
        e for e in validate_configuration(config, args_types=reg.args_types(), validate_plugin_args=False)
        if e.path.startswith(("clientConnection", "leaderElection"))
    ]
    if flag_errors:
        _fail([str(e) for e in flag_errors])
    from kubesched.kube.delegated_auth import CACHE_TTL, parse_always_allow_paths
    from kubesched.kube.serving import SecureServingOptions

    try:
        always_allow = parse_always_allow_paths(authorization_always_allow_paths)
    except ValueError as err:
        _fail([f"--authorization-always-allow-paths: {err}"])
    serving = SecureServingOptions(
        bind_address=bind_address,
        secure_port=secure_port,
        cert_dir=cert_dir,
        tls_cert_file=tls_cert_file,
        tls_private_key_file=tls_private_key_file,
        client_ca_file=client_ca_file,
        authentication_kubeconfig=authentication_kubeconfig,
        authorization_kubeconfig=authorization_kubeconfig,
        authentication_skip_lookup=authentication_skip_lookup,
        authentication_tolerate_lookup_failure=authentication_tolerate_lookup_failure,
        always_allow_paths=always_allow,
        token_cache_ttl=_or(authentication_token_webhook_cache_ttl, CACHE_TTL),
        authorized_cache_ttl=_or(authorization_webhook_cache_authorized_ttl, CACHE_TTL),
        unauthorized_cache_ttl=_or(authorization_webhook_cache_unauthorized_ttl, CACHE_TTL),
    )
    if write_config_to is not None:
        _write_config(write_config_to, config)
    if config.enable_profiling:
        info_s(logging.getLogger("kubesched.kube.run"), v(2), "Profiling is not served: kubesched has no Go pprof "
               "endpoints", enableProfiling=True, enableContentionProfiling=config.enable_contention_profiling)
    options = RunOptions(
        kubeconfig=kubeconfig,
        master=master,
        feature_gates=gates,
        metrics_bind_address=metrics_bind_address or DEFAULT_METRICS_ADDRESS,
        serving=serving,
        legacy_metrics=legacy_metrics,
    )
    if shutdown_grace_period is not None:
        options.shutdown_grace = shutdown_grace_period
    try:
        app = SchedulerApp(config, reg, options)
    except (KubeConfigError, LeaderElectionError, ValueError, FrameworkError) as err:
        _fail([str(err)])
    sys.exit(app.run())


# -- kubesched trace: replays of published traces (issue 6) ----------------------------------------
def _trace_options(
    policies: Sequence[str] | None, tune: float, seeds: Sequence[int], seed_range: str | None
) -> tuple[list[str], list[str], list[int]]:
    """The trace commands' shared options: (problems, one line each; policies; seeds)."""
    from kubesched.sim import trace as tr
    from kubesched.sim.alibaba import check_tune

    problems: list[str] = []
    chosen: list[str] = []
    run_seeds: list[int] = []
    if policies is not None:
        try:
            chosen = tr.parse_policies(policies)
        except ValueError as err:
            problems.append(str(err))
    try:
        check_tune(tune)
    except ValueError as err:
        problems.append(f"--tune: {err}")
    try:
        run_seeds = tr.parse_seeds(seeds, seed_range)
    except ValueError as err:
        problems.append(str(err))
    return problems, chosen, run_seeds


@cli.group()
def trace() -> None:
    """Replay a published cluster trace through the scheduler."""


@trace.command("alibaba-gpu")
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(), help="openb_node_list_*.csv")
@click.option("--pods", "pods_csv", required=True, type=click.Path(), help="openb_pod_list_*.csv")
@click.option("--policy", "policies", multiple=True, required=True,
              help="Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, FGDPlus, FGDOnline or "
                   "RatioDelta (repeat, comma-separate, or 'all').")
@click.option("--tune", type=float, default=1.3, show_default=True,
              help="Workload: x GPU capacity, > 0 and at most 10.")
@click.option("--seed", "seeds", type=int, multiple=True, help="Run seed (repeat for several). Default: 42.")
@click.option("--seeds", "seed_range", default=None,
              help="A range of seeds, e.g. 42..51; results are means. At most 100 seeds in all.")
@click.option("--standalone", is_flag=True, help="Use the standalone engine replay (the reference) instead.")
@click.option("--report", "report", type=click.Path(), default=None,
              help="Write an HTML report (and a PNG beside it) of allocation and fragmentation curves.")
@click.option("--bound", "with_bound", is_flag=True,
              help="Also the upper bound (trace bound) and, per policy, the gap to it and the share of the "
                   "baseline's gap it closes.")
@click.option("--baseline", default="Random", show_default=True,
              help="With --bound: the policy the share of the gap closed is measured from (replayed too).")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
def trace_alibaba_gpu(
    nodes_csv: str,
    pods_csv: str,
    policies: tuple[str, ...],
    tune: float,
    seeds: tuple[int, ...],
    seed_range: str | None,
    standalone: bool,
    report: str | None,
    with_bound: bool,
    baseline: str,
    output: str,
) -> None:
    """Schedule the Alibaba GPU trace (FGD paper, ATC '23) one pod at a time with GpuShare and report the
    GPU allocation ratio at 10..130 % arrived workload, fragmentation, failed pods and wall time."""
    from kubesched.sim import trace as tr
    from kubesched.sim.alibaba import TraceError, load_trace

    _setup_logging(0)
    problems, chosen, run_seeds = _trace_options(policies, tune, seeds, seed_range)
    if report is not None and not Path(report).resolve().parent.is_dir():
        problems.append(f"--report: {report}: no such directory {str(Path(report).resolve().parent)!r}")
    if with_bound:
        try:
            names = tr.parse_policies([baseline])
        except ValueError as err:
            problems.append(str(err).replace("--policy", "--baseline", 1))
        else:
            if len(names) != 1:
                problems.append(f"--baseline: {baseline!r}: name one policy")
            else:
                baseline = names[0]
                chosen = chosen if baseline in chosen else [*chosen, baseline]
    if problems:
        _fail(problems)
    try:
        data = load_trace(nodes_csv, pods_csv)
    except TraceError as err:
        _fail(err.errors)
    bound_out: dict[str, Any] | None = None
    if with_bound:
        from kubesched.sim.gpu_bound import BoundError
        from kubesched.sim.trace_bound import bounds

        try:
            bound_out = bounds(data, run_seeds, tune)
        except BoundError as err:
            _fail([str(err)])
    if report is not None:
        from kubesched.sim.trace_report import PlotUnavailableError, require_matplotlib

        try:
            require_matplotlib()
        except PlotUnavailableError as err:
            _fail([str(err)])
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err_console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not err_console.is_terminal) as bar:

        def start(label: str, total: int) -> Callable[[int, int], None]:
            task = bar.add_task(label, total=total)
            return lambda done, _total: bar.update(task, completed=done)

        try:
            runs = tr.run_replays(data, chosen, run_seeds, tune, standalone=standalone, progress=start)
        except (ValueError, FrameworkError, ConfigError) as err:
            _fail([str(e) for e in err.errors] if isinstance(err, ConfigError) else [str(err)])
    nodes = len(data.nodes)
    if report is not None:
        from kubesched.sim.trace_report import write_report

        try:
            png = write_report(report, runs, nodes=nodes, title=f"{Path(pods_csv).name} on {Path(nodes_csv).name}")
        except OSError as err:
            _fail([f"--report: {report}: {err.strerror or err}"])
        err_console.print(f"report: {report} and {png}", highlight=False)
    out = tr.summaries(runs, nodes)
    if bound_out is not None:
        from kubesched.sim.trace_gap import with_gaps

        out = with_gaps(out, bound_out, baseline)
    if output != "table":
        _emit(out[0] if len(out) == 1 else out, output)
        return
    # 13 columns of curve: wide enough for the whole table when the output is a pipe or a file
    Console(width=None if sys.stdout.isatty() else 160).print(tr.table_of(out, nodes))


# -- kubesched bench: scheduler_perf-style throughput (issue 7) --------------------------------------
@cli.command()
@click.option("--workload", required=True, help="SchedulingBasic, PreemptionBasic, ... (docs/performance.md).")
@click.option("--nodes", type=int, default=None,
              help="Nodes, 1..50000 (default: the workload's scheduler_perf size).")
@click.option("--init-pods", type=int, default=None, help="Pods scheduled before the clock starts, 0..500000.")
@click.option("--pods", type=int, default=None, help="Measured pods, 1..100000.")
@click.option("--backend", type=click.Choice(["sim", "apiserver"]), default="sim", show_default=True)
@click.option("--scheduler", "scheduler_name", type=click.Choice(["kubesched", "kube-scheduler"]), default="kubesched",
              show_default=True, help="kube-scheduler needs --backend apiserver (scripts/controlplane.sh builds it).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--kernel", is_flag=True,
              help="Instead of a scheduler, the workload's bare numpy filter+score kernel (SchedulingBasic only): "
                   "the rate to compare the scheduler's with.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("-o", "--output", type=click.Choice(["json", "yaml"]), default="json", show_default=True)
@_emulated_version_option
@_feature_gates_option
def bench(
    workload: str,
    nodes: int | None,
    init_pods: int | None,
    pods: int | None,
    backend: str,
    scheduler_name: str,
    seed: int,
    kernel: bool,
    progress: bool | None,
    output: str,
    release: Release | None,
    feature_gates: tuple[str, ...],
) -> None:
    """Run one benchmark workload and print one JSON object: pods/s of the measured pods (bound /
    time from the first one's arrival to the last one's binding), attempt latency, peak RSS."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kubesched.bench.harness import BenchError, run_bench

    _setup_logging(0)
    err_console = Console(stderr=True)
    show = err_console.is_terminal if progress is None else progress
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not show) as bar:
        what = "kernel" if kernel else f"{backend}, {scheduler_name}"
        task = bar.add_task(escape(f"{workload} ({what})"), total=None)

        def report(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            result = run_bench(workload, nodes=nodes, init_pods=init_pods, pods=pods, backend=backend,
                               scheduler=scheduler_name, seed=seed, progress=report, release=release,
                               kernel=kernel, feature_gates=feature_gates)
        except BenchError as err:
            _fail(err.errors)
    _emit(result.to_json(), output, indent=None)


@cli.command()
@click.option("-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
def version(output: str) -> None:
    """kubesched's version and the kube-scheduler releases it behaves as (--emulated-version)."""
    from kubesched.config.releases import DEFAULT_RELEASE, RELEASES

    releases = {str(r): r.binary for r in RELEASES}
    info = {
        "version": __version__,
        "defaultRelease": str(DEFAULT_RELEASE),
        "releases": releases,
        "python": ".".join(map(str, sys.version_info[:3])),
    }
    if output != "text":
        _emit(info, output)
    else:
        shown = ", ".join(f"{r} ({b})" for r, b in releases.items())
        click.echo(f"kubesched {__version__}: behaves as kube-scheduler {DEFAULT_RELEASE.binary} by default; "
                   f"--emulated-version {shown}")


@trace.command("bound")
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(), help="openb_node_list_*.csv")
@click.option("--pods", "pods_csv", required=True, type=click.Path(), help="openb_pod_list_*.csv")
@click.option("--tune", type=float, default=1.3, show_default=True, help="Workload: x GPU capacity.")
@click.option("--seed", "seeds", type=int, multiple=True, help="Run seed (repeat for several). Default: 42.")
@click.option("--seeds", "seed_range", default=None, help="A range of seeds, e.g. 42..51.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
def trace_bound(
    nodes_csv: str, pods_csv: str, tune: float, seeds: tuple[int, ...], seed_range: str | None, output: str
) -> None:
    """An upper bound on the GPU allocation ratio at each arrived level, for exactly the pod
    sequences the replays of these seeds use: no policy can place more (docs/gpu.md)."""
    from kubesched.sim.alibaba import TraceError, load_trace
    from kubesched.sim.gpu_bound import BoundError
    from kubesched.sim.trace_bound import bound_table, bounds

    _setup_logging(0)
    problems, _, run_seeds = _trace_options(None, tune, seeds, seed_range)
    if problems:
        _fail(problems)
    try:
        data = load_trace(nodes_csv, pods_csv)
    except TraceError as err:
        _fail(err.errors)
    try:
        out = bounds(data, run_seeds, tune)
    except BoundError as err:
        _fail([str(err)])
    if output != "table":
        _emit(out, output)
        return
    Console().print(bound_table(out))


@trace.command("sweep")
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(), help="openb_node_list_*.csv")
@click.option("--pods", "pods_csvs", multiple=True, required=True, type=click.Path(),
              help="A pod list (repeat for several: openb_pod_list_*.csv).")
@click.option("--policy", "policies", multiple=True, required=True,
              help="Policies (repeat, comma-separate, or 'all').")
@click.option("--seed", "seeds", type=int, multiple=True, help="Run seed (repeat for several).")
@click.option("--seeds", "seed_range", default=None, help="A range of seeds, e.g. 42..51.")
@click.option("--tune", type=float, default=1.3, show_default=True, help="Workload: x GPU capacity.")
@click.option("--standalone", is_flag=True, help="Replay with the standalone engine instead of the framework.")
@click.option("--executor", type=click.Choice(["process", "ray"]), default="process", show_default=True,
              help="process: every core of this machine; ray: the Ray cluster ray.init connects to.")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Processes (default: the cores).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for the cells (resumable), sweep.csv, sweep.parquet and sweep.html.")
@click.option("--bound", "with_bound", is_flag=True,
              help="Also each pod list's upper bound (trace bound, mean over the seeds) as a line in the report.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
def trace_sweep(
    nodes_csv: str,
    pods_csvs: tuple[str, ...],
    policies: tuple[str, ...],
    seeds: tuple[int, ...],
    seed_range: str | None,
    tune: float,
    standalone: bool,
    executor: str,
    workers: int | None,
    out_dir: str,
    with_bound: bool,
    output: str,
) -> None:
    """Replay every pod list with every policy and seed, in parallel and resumable (finished cells
    are kept under --out and not run again), into a tidy table (CSV and Parquet) and an HTML report
    of the means and the spread across seeds."""
    from kubesched.sim.alibaba import TraceError, load_trace
    from kubesched.sim.sweep import SweepError, cells_of, run_sweep, write_table
    from kubesched.sim.sweep_report import render_sweep_report

    _setup_logging(0)
    problems, chosen, run_seeds = _trace_options(policies, tune, seeds, seed_range)
    for path in (nodes_csv, *pods_csvs):
        if not Path(path).is_file():
            problems.append(f"{path}: no such file")
    if problems:
        _fail(problems)
    try:  # every input readable before any worker starts
        for pods_csv in dict.fromkeys(pods_csvs):
            load_trace(nodes_csv, pods_csv)
    except TraceError as err:
        _fail(err.errors)
    out = Path(out_dir)
    cells = cells_of(nodes_csv, list(dict.fromkeys(pods_csvs)), chosen, run_seeds, tune, standalone)
    err_console = Console(stderr=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task("cells", total=len(cells))
        try:
            result = run_sweep(cells, out, executor=executor, workers=workers,
                               progress=lambda done, _total: bar.update(task, completed=done))
            files = write_table(result.rows, out)
        except SweepError as err:
            _fail([str(err)])
        except OSError as err:
            _fail([f"--out: {out_dir}: {err.strerror or err}"])
    bounds = None
    if with_bound:
        from kubesched.sim.gpu_bound import BoundError
        from kubesched.sim.sweep import sweep_bounds

        try:
            bounds = sweep_bounds(nodes_csv, list(dict.fromkeys(pods_csvs)), run_seeds, tune, out)
        except BoundError as err:
            _fail([str(err)])
        except OSError as err:
            _fail([f"--out: {out_dir}: {err.strerror or err}"])
    report = out / "sweep.html"
    engine = "standalone" if standalone else "framework"
    report.write_text(
        render_sweep_report(result.rows, tune=tune, seeds=run_seeds, engine=engine, bounds=bounds), "utf-8"
    )
    written = [str(f) for f in (*files, report)]
    if output != "table":
        _emit({"cells": len(cells), "ran": result.ran, "skipped": result.skipped, "files": written}, output)
        return
    err_console.print(f"{len(cells)} cells: {result.ran} run, {result.skipped} already done; {', '.join(written)}",
                      highlight=False)


@cli.group()
def examples() -> None:
    """The example scenarios shipped with kubesched (the README's tour), to list or copy out."""


@examples.command("list")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
def examples_list(output: str) -> None:
    """Each example's name and what it shows."""
    from kubesched.sim.examples import list_examples

    found = list_examples()
    if output != "table":
        _emit([{"name": e.name, "summary": e.summary} for e in found], output)
        return
    if not found:
        _fail(["no examples: this kubesched was installed without them"])
    width = max(len(e.name) for e in found)
    for e in found:
        click.echo(f"{e.name:<{width}}  {e.summary}")


@examples.command("copy")
@click.argument("name")
@click.argument("dest", type=click.Path(file_okay=False))
def examples_copy(name: str, dest: str) -> None:
    """Copy example NAME into the folder DEST (new, or empty), then run it with
    ``kubesched simulate DEST``."""
    from kubesched.sim.examples import ExampleError, copy_example

    try:
        out = copy_example(name, Path(dest))
    except ExampleError as err:
        _fail([str(err)])
    click.echo(f"copied {name} to {out}; run it with: kubesched simulate {out}")


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL, as ``kubectl completion`` does:
    ``source <(kubesched completion bash)`` (add it to ~/.bashrc to keep it)."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None  # the three choices are click's own
    click.echo(cls(cli, {}, "kubesched", "_KUBESCHED_COMPLETE").source())


def main(argv: Sequence[str] | None = None) -> None:
    cli.main(args=list(argv) if argv is not None else None, prog_name="kubesched")


# -- the Python form of app.NewSchedulerCommand(app.WithPlugin(name, factory)) -------------------
def with_plugin(name: str, factory: Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    """An option for :func:`new_scheduler_command`: register ``factory`` under ``name``."""
    return (name, factory)


def new_scheduler_command(*options: tuple[str, Callable[..., Any]]) -> click.Group:
    """kube-scheduler's ``app.NewSchedulerCommand(app.WithPlugin(...))``: a user's own ``main``
    registers out-of-tree plugin factories by name and gets the same command line::

        from kubesched.cli import new_scheduler_command, with_plugin
        if __name__ == "__main__":
            new_scheduler_command(with_plugin("MyPlugin", MyPlugin))()
    """
    _EXTRA_PLUGINS.extend(options)
    return cli
