#!/usr/bin/env bash
# CI entry point: build (or reuse) the control plane of every supported Kubernetes release and print
# the default release's binary directory.
#
# .ci/run can do:   export KUBESCHED_CONTROLPLANE_BIN=$(bash scripts/ci-controlplane.sh)
# Extra arguments go to every controlplane.sh run (e.g. --with-kwok, --with-helm: built once into the
# shared tools directory, then only linked into each release's directory). The default release is
# built first, then the others (`controlplane.sh --list-versions`) into sibling directories, where
# find_binaries("v1.37") finds them. Progress goes to stderr; stdout is only the default release's
# directory, one line. Measured for one release on 2 cores with empty Go caches: about 4.5 minutes
# on a quiet machine (downloads included), about 17 minutes under a load average near 10; each
# further release adds about as much again; a warm cache returns in well under a second.
set -euo pipefail
# The braces make bash read the whole script before running it, so editing the file (git pull)
# cannot disturb a run in progress.
{
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# CI has the machine to itself: build at normal priority.
export KUBESCHED_BUILD_NICE=${KUBESCHED_BUILD_NICE:-0}

# Build one release (none: the default) and check its binaries; prints its directory.
build() {
  local start=$SECONDS dir b
  dir=$("$here/controlplane.sh" --print-dir "$@")
  echo "[ci-controlplane] control plane ready in $((SECONDS - start)) s: $dir" >&2
  local want=(etcd kube-apiserver kube-scheduler)
  if [[ ${KUBESCHED_CONTROLPLANE_KCM:-0} == 1 || " $* " == *" --with-kcm "* ]]; then
    want+=(kube-controller-manager)
  fi
  for b in "${want[@]}"; do
    [[ -x $dir/$b ]] || { echo "[ci-controlplane] missing $dir/$b" >&2; exit 1; }
  done
  "$dir/kube-apiserver" --version >&2
  echo "$dir"
}

default_dir=$(build "$@")
versions=$("$here/controlplane.sh" --list-versions)
while read -r version; do
  [[ $version == "$(basename "$default_dir")" ]] && continue
  build --k8s-version "$version" "$@" >/dev/null
done <<<"$versions"
echo "$default_dir"
exit
}
