#!/usr/bin/env bash
# Build a real control plane (etcd, kube-apiserver, kube-scheduler; kube-controller-manager, kwok
# and helm on request) from
# the Go module proxy, for kubesched's e2e tests, chart tests and benchmarks. One Kubernetes release
# per run: the default one, or any other supported release (--k8s-version), each in its own directory.
#
# Why a throwaway module: k8s.io/kubernetes points its staging modules (31 in v1.35, 33 in v1.37) at
# ./staging/src via replace directives, which the module zip does not contain, so
# `go install k8s.io/kubernetes/cmd/...@vX` is refused. We require k8s.io/kubernetes from a scratch
# module and replace every staging module by its published v0.Y.Z twin; the list is generated from
# the release's own go.mod, never hard-coded. etcd gets its own scratch module so that minimal
# version selection cannot move kube-apiserver's etcd client libraries.
#
# Idempotent: binaries land in $CACHE/<k8s-version>/ with one .stamp-<component> file each saying
# how they were built; components whose stamp matches are not rebuilt, and when all match the
# script exits at once. Builds go to a scratch directory first, so an interrupted run (or a test
# using the old binaries meanwhile) never sees a half-written binary. kwok and helm do not depend on
# the Kubernetes release: they are built once into $CACHE/tools/ and symlinked into each release's
# directory that asks for them, so every release directory looks alike to the tests.
#
# Usage: scripts/controlplane.sh [--k8s-version vX.Y.Z] [--with-kcm] [--with-kwok] [--with-helm] [--force]
#                                [--print-dir] [--list-versions]
#   --k8s-version   the Kubernetes release to build: v1.37.2 (the default) or v1.35.4
#   --with-kcm      also build kube-controller-manager (the PV controller of the volume e2e tests),
#                   from the same k8s.io/kubernetes module as kube-apiserver
#   --with-kwok     also build kwok (fake kubelets: nodes stay Ready, bound pods turn Running) and
#                   write its default stages to kwok-stages.yaml (its --config)
#   --with-helm     also build helm v3 (tests/e2e/test_chart.py: helm lint and helm template)
#   --force         rebuild even when the cache is warm
#   --print-dir     print only the binary directory on stdout (progress goes to stderr)
#   --list-versions print the supported Kubernetes releases, one a line, the default first; build nothing
# Environment:
#   KUBESCHED_K8S_VERSION          same as --k8s-version (the flag wins)
#   KUBESCHED_CONTROLPLANE_CACHE   cache root (default: $HOME/.cache/kubesched/controlplane)
#   KUBESCHED_CONTROLPLANE_KCM=1   same as --with-kcm
#   KUBESCHED_CONTROLPLANE_KWOK=1  same as --with-kwok
#   KUBESCHED_CONTROLPLANE_HELM=1  same as --with-helm
#   KUBESCHED_BUILD_JOBS           go build -p and GOMAXPROCS (default: 2)
#   KUBESCHED_BUILD_NICE           nice level of the go commands (default: 10)
set -euo pipefail
# The braces make bash read the whole script before running it, so editing the file (git pull)
# cannot disturb a run in progress.
{

DEFAULT_K8S_VERSION=v1.37.2 # kubesched's default release (config/releases.py); the e2e tests' control plane
# Every supported release (newest patch of its minor served by the Go module proxy) and the Go it
# declares in its go.mod.
declare -A K8S_GO=([v1.35.4]=1.25 [v1.37.2]=1.26)
SUPPORTED=(v1.37.2 v1.35.4)
# etcd serves every release: v1.37.2 defaults to etcd 3.7.0 (hack/lib/etcd.sh) but supports any
# external etcd from 3.5.24 (MinExternalEtcdVersion in cmd/kubeadm/app/constants/constants.go).
ETCD_VERSION=v3.6.16        # newest v3.6 patch served (go.etcd.io/etcd/server/v3)
KWOK_VERSION=v0.8.0         # sigs.k8s.io/kwok, optional
HELM_VERSION=v3.22.0        # helm.sh/helm/v3, optional: newest v3 release served

CACHE_ROOT=${KUBESCHED_CONTROLPLANE_CACHE:-$HOME/.cache/kubesched/controlplane}
TOOLS_DIR=$CACHE_ROOT/tools  # kwok and helm, shared by the release directories
K8S_VERSION=${KUBESCHED_K8S_VERSION:-$DEFAULT_K8S_VERSION}
JOBS=${KUBESCHED_BUILD_JOBS:-2}
NICE=${KUBESCHED_BUILD_NICE:-10}
WITH_KCM=${KUBESCHED_CONTROLPLANE_KCM:-0}
WITH_KWOK=${KUBESCHED_CONTROLPLANE_KWOK:-0}
WITH_HELM=${KUBESCHED_CONTROLPLANE_HELM:-0}
FORCE=0
PRINT_DIR=0

while [[ $# -gt 0 ]]; do
  case $1 in
    --k8s-version) [[ $# -ge 2 ]] || { echo "controlplane.sh: --k8s-version needs a value" >&2; exit 2; }
                   K8S_VERSION=$2; shift ;;
    --k8s-version=*) K8S_VERSION=${1#*=} ;;
    --with-kcm) WITH_KCM=1 ;;
    --with-kwok) WITH_KWOK=1 ;;
    --with-helm) WITH_HELM=1 ;;
    --force) FORCE=1 ;;
    --print-dir) PRINT_DIR=1 ;;
    --list-versions) printf '%s\n' "$DEFAULT_K8S_VERSION"
                     for v in "${SUPPORTED[@]}"; do [[ $v == "$DEFAULT_K8S_VERSION" ]] || printf '%s\n' "$v"; done
                     exit 0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "controlplane.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z ${K8S_GO[$K8S_VERSION]+set} ]]; then
  echo "controlplane.sh: unsupported Kubernetes version: '$K8S_VERSION' (supported: ${SUPPORTED[*]})" >&2
  exit 2
fi
BIN_DIR=$CACHE_ROOT/$K8S_VERSION
GO_NEEDED=${K8S_GO[$K8S_VERSION]}
[[ $WITH_KCM == 1 ]] || WITH_KCM=0
[[ $WITH_KWOK == 1 ]] || WITH_KWOK=0
[[ $WITH_HELM == 1 ]] || WITH_HELM=0

log() { printf '[controlplane %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- what a finished build looks like -------------------------------------------------------
K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
K8S_PATCH=${K8S_VERSION##*.}
STAGING_VERSION=v0.$K8S_MINOR.$K8S_PATCH
FLAGS="-trimpath -ldflags=-s -w"
# One stamp file per component, written after its binaries are in place: a component is rebuilt
# only when its binaries are missing or were built from something else. kube-controller-manager has
# a stamp of its own (kcm), so a directory built without it keeps its kube-apiserver and
# kube-scheduler when --with-kcm adds it later, and a directory without the binary builds it.
declare -A STAMP=(
  [kubernetes]="k8s.io/kubernetes $K8S_VERSION staging $STAGING_VERSION $FLAGS version-stamped"
  [kcm]="k8s.io/kubernetes/cmd/kube-controller-manager $K8S_VERSION staging $STAGING_VERSION $FLAGS version-stamped"
  [etcd]="go.etcd.io/etcd/server/v3 $ETCD_VERSION $FLAGS"
  [kwok]="sigs.k8s.io/kwok/cmd/kwok $KWOK_VERSION $FLAGS stages=node/fast,node/heartbeat,pod/fast"
  [helm]="helm.sh/helm/v3/cmd/helm $HELM_VERSION $FLAGS version-stamped"
)
declare -A PRODUCES=([kubernetes]="kube-apiserver kube-scheduler" [kcm]="kube-controller-manager" [etcd]="etcd"
                     [kwok]="kwok" [helm]="helm")
declare -A DATA=([kubernetes]="" [kcm]="" [etcd]="" [kwok]="kwok-stages.yaml" [helm]="")
# Where each component's files and stamp live: its release's directory, or the shared tools one.
declare -A HOME_DIR=([kubernetes]=$BIN_DIR [kcm]=$BIN_DIR [etcd]=$BIN_DIR [kwok]=$TOOLS_DIR [helm]=$TOOLS_DIR)
COMPONENTS=(etcd kubernetes)
if [[ $WITH_KCM == 1 ]]; then COMPONENTS+=(kcm); fi
if [[ $WITH_KWOK == 1 ]]; then COMPONENTS+=(kwok); fi
if [[ $WITH_HELM == 1 ]]; then COMPONENTS+=(helm); fi

is_built_in() {
  local c=$1 dir=$2 b
  for b in ${PRODUCES[$c]}; do [[ -x $dir/$b ]] || return 1; done
  for b in ${DATA[$c]}; do [[ -f $dir/$b ]] || return 1; done
  [[ -f $dir/.stamp-$c && $(<"$dir/.stamp-$c") == "${STAMP[$c]}" ]]
}

# A shared component is linked into the release's directory: every file must point at its copy.
is_linked() {
  local c=$1 b
  for b in ${PRODUCES[$c]} ${DATA[$c]}; do
    [[ -L $BIN_DIR/$b && $(readlink "$BIN_DIR/$b") == "../tools/$b" ]] || return 1
  done
}

link_tools() {
  local c=$1 b
  log "linking $c from $TOOLS_DIR into $BIN_DIR"
  mkdir -p "$BIN_DIR"
  for b in ${PRODUCES[$c]} ${DATA[$c]}; do ln -sfn "../tools/$b" "$BIN_DIR/$b"; done
  rm -f "$BIN_DIR/.stamp-$c"  # the stamp lives in tools/ now
}

# Directories built before kwok and helm moved to tools/ hold them as plain files with a stamp:
# move them over instead of building them again.
adopt_tools() {
  local c=$1 b
  [[ $FORCE == 0 && $TOOLS_DIR != "$BIN_DIR" ]] || return 1
  is_built_in "$c" "$BIN_DIR" || return 1
  for b in ${PRODUCES[$c]} ${DATA[$c]}; do [[ ! -L $BIN_DIR/$b ]] || return 1; done
  log "moving $c from $BIN_DIR to $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  rm -f "$TOOLS_DIR/.stamp-$c"
  for b in ${PRODUCES[$c]} ${DATA[$c]}; do mv -f "$BIN_DIR/$b" "$TOOLS_DIR/$b"; done
  cp "$BIN_DIR/.stamp-$c" "$TOOLS_DIR/.stamp-$c"
}

is_built() {
  local c=$1
  is_built_in "$c" "${HOME_DIR[$c]}" || return 1
  [[ ${HOME_DIR[$c]} == "$BIN_DIR" ]] || is_linked "$c"
}

finish() {
  log "binaries in $BIN_DIR:"
  local b
  for b in "$BIN_DIR"/*; do
    [[ -x $b && -f $b ]] || continue
    log "  $(basename "$b")  $(du -hL "$b" | cut -f1)$([[ -L $b ]] && echo " -> $(readlink "$b")")"
  done
  if [[ $PRINT_DIR == 1 ]]; then echo "$BIN_DIR"; fi
}

TODO=()
for c in "${COMPONENTS[@]}"; do
  if [[ ${HOME_DIR[$c]} == "$TOOLS_DIR" && $FORCE == 0 ]]; then
    # Built already (here or, in the old layout, in this release's directory): only link it.
    if is_built_in "$c" "$TOOLS_DIR" || adopt_tools "$c"; then
      is_linked "$c" || link_tools "$c"
      continue
    fi
  fi
  if [[ $FORCE == 1 ]] || ! is_built "$c"; then TODO+=("$c"); fi
done
if [[ ${#TODO[@]} == 0 ]]; then
  log "cache is warm ($K8S_VERSION$([[ $WITH_KCM == 1 ]] && echo " with kube-controller-manager"), etcd $ETCD_VERSION$([[ $WITH_KWOK == 1 ]] && echo ", kwok $KWOK_VERSION")$([[ $WITH_HELM == 1 ]] && echo ", helm $HELM_VERSION")); nothing to build"
  finish
  exit 0
fi

# --- toolchain ---------------------------------------------------------------------------------
command -v go >/dev/null || die "Go is not installed (need Go >= $GO_NEEDED for Kubernetes $K8S_VERSION)"
GO_VERSION=$(go env GOVERSION)
GO_MINOR=${GO_VERSION#go1.}; GO_MINOR=${GO_MINOR%%.*}
if ! [[ $GO_MINOR =~ ^[0-9]+$ && $GO_MINOR -ge ${GO_NEEDED#1.} ]]; then
  # Kubernetes 1.35 and etcd 3.6 declare go 1.25, Kubernetes 1.37 and kwok 0.8 go 1.26. An older go
  # (>= 1.21) can fetch a newer toolchain from the module proxy by itself unless GOTOOLCHAIN=local
  # forbids it.
  [[ $(go env GOTOOLCHAIN) != local ]] \
    || die "$GO_VERSION is older than the go $GO_NEEDED that $K8S_VERSION declares; install Go >= $GO_NEEDED or set GOTOOLCHAIN=auto"
  log "$GO_VERSION is older than go $GO_NEEDED: the go command will switch toolchains (GOTOOLCHAIN=$(go env GOTOOLCHAIN))"
fi
export GOFLAGS="-mod=mod -buildvcs=false" GOMAXPROCS=$JOBS CGO_ENABLED=0 GO111MODULE=on
log "using $GO_VERSION, -p $JOBS, GOMODCACHE=$(go env GOMODCACHE), GOCACHE=$(go env GOCACHE)"

mkdir -p "$CACHE_ROOT"
WORK=$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
STAGE=$WORK/out
mkdir -p "$STAGE"

# Builds are CPU-heavy and developer machines are shared: lower our priority by default. Under a
# load average near 10 this can stretch a ~5 minute build past half an hour; CI sets 0.
GO=(nice -n "$NICE" go)
BUILD=("${GO[@]}" build -p "$JOBS" -trimpath)

# --- kube-apiserver + kube-scheduler (+ kube-controller-manager) ---------------------------------
# The scratch module and the version ldflags, made once per run (both builds use them).
K8S_MOD=""
K8S_LDFLAGS=""
prepare_kubernetes() {
  [[ -z $K8S_MOD ]] || return 0
  local mod=$WORK/kubernetes
  mkdir -p "$mod"
  log "fetching k8s.io/kubernetes@$K8S_VERSION metadata"
  local info gomod release_time
  info=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION") \
    || die "go mod download k8s.io/kubernetes@$K8S_VERSION failed: $info"
  gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
  [[ -f $gomod ]] || die "no go.mod for k8s.io/kubernetes@$K8S_VERSION in: $info"
  release_time=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "${gomod%.mod}.info" 2>/dev/null || true)

  # Every `k8s.io/X => ./staging/src/k8s.io/X` becomes `k8s.io/X => k8s.io/X v0.Y.Z`.
  local staging
  staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*#\1#p' "$gomod")
  [[ -n $staging ]] || die "found no staging replace directives in $gomod"
  log "replacing $(wc -l <<<"$staging") staging modules with $STAGING_VERSION"
  {
    echo "module kubesched.invalid/controlplane-build"
    echo
    echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done <<<"$staging"
    echo ")"
  } >"$mod/go.mod"
  # A blank-import file keeps the commands' packages in the module graph for `go mod tidy`.
  cat >"$mod/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOF
  log "resolving modules (go mod tidy)"
  (cd "$mod" && "${GO[@]}" mod tidy)

  local x ldflags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    for x in "gitVersion=$K8S_VERSION" "gitMajor=1" "gitMinor=$K8S_MINOR" "gitTreeState=clean" \
             "buildDate=${release_time:-1970-01-01T00:00:00Z}"; do
      ldflags+=" -X $pkg.$x"
    done
  done
  K8S_MOD=$mod
  K8S_LDFLAGS=$ldflags
}

build_kubernetes() {
  prepare_kubernetes
  log "building kube-apiserver and kube-scheduler $K8S_VERSION (the long part)"
  local t0=$SECONDS
  (cd "$K8S_MOD" && "${BUILD[@]}" -ldflags="$K8S_LDFLAGS" -o "$STAGE/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler)
  log "kubernetes built in $((SECONDS - t0)) s"
}

build_kcm() {
  prepare_kubernetes
  log "building kube-controller-manager $K8S_VERSION"
  local t0=$SECONDS
  (cd "$K8S_MOD" && "${BUILD[@]}" -ldflags="$K8S_LDFLAGS" -o "$STAGE/" k8s.io/kubernetes/cmd/kube-controller-manager)
  log "kube-controller-manager built in $((SECONDS - t0)) s"
}

# --- etcd ----------------------------------------------------------------------------------------
build_etcd() {
  # The same etcd serves every release: copy one another release's directory already has.
  local d
  if [[ $FORCE == 0 ]]; then
    for d in "$CACHE_ROOT"/v*/; do
      d=${d%/}
      [[ $d != "$BIN_DIR" ]] && is_built_in etcd "$d" || continue
      log "copying etcd $ETCD_VERSION from $d"
      cp "$d/etcd" "$STAGE/etcd"
      return 0
    done
  fi
  local mod=$WORK/etcd
  mkdir -p "$mod"
  # server/go.mod replaces its sibling modules with ../ paths; those are ignored outside the main
  # module, and its requires already pin the matching api/client/pkg versions.
  cat >"$mod/go.mod" <<EOF
module kubesched.invalid/etcd-build

go 1.25.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
EOF
  cat >"$mod/tools.go" <<'EOF'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
EOF
  log "resolving etcd $ETCD_VERSION"
  (cd "$mod" && "${GO[@]}" mod tidy)
  log "building etcd $ETCD_VERSION"
  local t0=$SECONDS
  (cd "$mod" && "${BUILD[@]}" -ldflags="-s -w" -o "$STAGE/etcd" go.etcd.io/etcd/server/v3)
  log "etcd built in $((SECONDS - t0)) s"
}

# --- kwok (optional) -----------------------------------------------------------------------------
build_kwok() {
  # kwok's go.mod has no replace directives, so a plain `go install` works.
  log "building kwok $KWOK_VERSION"
  local t0=$SECONDS
  GOBIN=$STAGE "${GO[@]}" install -p "$JOBS" -trimpath -ldflags="-s -w" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  log "kwok built in $((SECONDS - t0)) s"
  # kwok does nothing without Stage objects; kwokctl embeds these defaults, the bare controller
  # needs them as --config. Take the "fast" node/pod stages and the node heartbeat from the
  # same release's module source.
  local info dir f
  info=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION")
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
  [[ -d $dir/kustomize/stage ]] || die "no kustomize/stage in sigs.k8s.io/kwok@$KWOK_VERSION ($dir)"
  for f in "$dir"/kustomize/stage/node/fast/*.yaml "$dir"/kustomize/stage/node/heartbeat/*.yaml \
           "$dir"/kustomize/stage/pod/fast/*.yaml; do
    [[ $(basename "$f") == kustomization.yaml ]] && continue
    echo "---"; echo "# from sigs.k8s.io/kwok@$KWOK_VERSION/${f#"$dir"/}"; cat "$f"
  done >"$STAGE/kwok-stages.yaml"
  grep -q '^kind: Stage' "$STAGE/kwok-stages.yaml" || die "no Stage objects found for kwok"
}

# --- helm (optional) -----------------------------------------------------------------------------
build_helm() {
  # helm's go.mod has no replace directives either. Its Makefile stamps the version and the
  # Kubernetes version that `helm template`/`helm lint` assume by default (client-go's minor + 1.0
  # = 1.Y); do the same so `helm version` says what it is. The tests pass --kube-version anyway.
  local info gomod client_go k8s_minor pkg=helm.sh/helm/v3
  info=$(go mod download -json "$pkg@$HELM_VERSION") || die "go mod download $pkg@$HELM_VERSION failed: $info"
  gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
  client_go=$(sed -n 's#^[[:space:]]*k8s\.io/client-go[[:space:]]\{1,\}v0\.\([0-9]*\)\..*#\1#p' "$gomod")
  [[ $client_go =~ ^[0-9]+$ ]] || die "no k8s.io/client-go requirement in $gomod"
  k8s_minor=$client_go
  local ldflags="-s -w -X $pkg/internal/version.version=$HELM_VERSION -X $pkg/internal/version.metadata="
  ldflags+=" -X $pkg/internal/version.gitTreeState=clean"
  for x in pkg/lint/rules pkg/chartutil; do
    ldflags+=" -X $pkg/$x.k8sVersionMajor=1 -X $pkg/$x.k8sVersionMinor=$k8s_minor"
  done
  log "building helm $HELM_VERSION"
  local t0=$SECONDS
  GOBIN=$STAGE "${GO[@]}" install -p "$JOBS" -trimpath -ldflags="$ldflags" "$pkg/cmd/helm@$HELM_VERSION"
  log "helm built in $((SECONDS - t0)) s"
}

# Publish one component: move its binaries in, then write its stamp, so an interrupted run never
# leaves a directory that looks complete.
publish() {
  local c=$1 b dir=${HOME_DIR[$1]}
  mkdir -p "$dir"
  rm -f "$dir/.stamp-$c"
  for b in ${PRODUCES[$c]}; do
    "$STAGE/$b" --version >/dev/null 2>&1 || "$STAGE/$b" --help >/dev/null 2>&1 \
      || die "built $b does not run"
    mv -f "$STAGE/$b" "$dir/$b"
  done
  for b in ${DATA[$c]}; do mv -f "$STAGE/$b" "$dir/$b"; done
  printf '%s\n' "${STAMP[$c]}" >"$dir/.stamp-$c"
  if [[ $dir != "$BIN_DIR" ]]; then link_tools "$c"; fi
}

T_START=$SECONDS
log "building ${TODO[*]} into $BIN_DIR"
for c in "${TODO[@]}"; do
  case $c in
    etcd) build_etcd ;;
    kubernetes) build_kubernetes ;;
    kcm) build_kcm ;;
    kwok) build_kwok ;;
    helm) build_helm ;;
  esac
  publish "$c"
done
"$BIN_DIR/kube-apiserver" --version >&2
# No `| head -n1` here: under pipefail, head exiting before etcd has written everything kills
# etcd with SIGPIPE and the script exits 141 (seen on a cold build). Capture, then print.
etcd_version=$("$BIN_DIR/etcd" --version)
printf '%s\n' "${etcd_version%%$'\n'*}" >&2
log "done in $((SECONDS - T_START)) s"
finish
exit
}
