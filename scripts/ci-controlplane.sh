#!/usr/bin/env bash
# CI entry point: build (or reuse) the control plane and print the binary directory.
#
# .ci/run can do:   export KUBESCHED_CONTROLPLANE_BIN=$(bash scripts/ci-controlplane.sh)
# Progress and the cold-build log go to stderr; stdout is only the directory. A cold build takes
# roughly a quarter of an hour on 2 cores (see the report in scripts/controlplane.sh's history);
# a warm cache returns in about a second.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
start=$SECONDS
dir=$("$here/controlplane.sh" --print-dir "$@")
echo "[ci-controlplane] control plane ready in $((SECONDS - start)) s: $dir" >&2
for b in etcd kube-apiserver; do
  [[ -x $dir/$b ]] || { echo "[ci-controlplane] missing $dir/$b" >&2; exit 1; }
done
"$dir/kube-apiserver" --version >&2
echo "$dir"
