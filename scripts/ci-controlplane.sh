#!/usr/bin/env bash
# CI entry point: build (or reuse) the control plane and print the binary directory.
#
# .ci/run can do:   export KUBESCHED_CONTROLPLANE_BIN=$(bash scripts/ci-controlplane.sh)
# Extra arguments go to controlplane.sh (e.g. --with-kwok, --with-helm). Progress goes to stderr; stdout is
# only the directory. Measured on 2 cores with empty Go caches: about 4.5 minutes on a quiet
# machine (downloads included), about 17 minutes under a load average near 10; a warm cache
# returns in well under a second.
set -euo pipefail
# The braces make bash read the whole script before running it, so editing the file (git pull)
# cannot disturb a run in progress.
{
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# CI has the machine to itself: build at normal priority.
export KUBESCHED_BUILD_NICE=${KUBESCHED_BUILD_NICE:-0}
start=$SECONDS
dir=$("$here/controlplane.sh" --print-dir "$@")
echo "[ci-controlplane] control plane ready in $((SECONDS - start)) s: $dir" >&2
for b in etcd kube-apiserver; do
  [[ -x $dir/$b ]] || { echo "[ci-controlplane] missing $dir/$b" >&2; exit 1; }
done
"$dir/kube-apiserver" --version >&2
echo "$dir"
exit
}
