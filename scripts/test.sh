#!/usr/bin/env bash
# Install everything the test suite needs and run all of it: lint, types, unit, e2e.
# The e2e tests need the real control plane (kube-apiserver + etcd, and kwok) built from the Go module
# proxy by scripts/controlplane.sh; it is built (or reused from the cache) when Go is available.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
if command -v go >/dev/null 2>&1; then
  # --with-kwok: tests/e2e/test_controlplane.py runs kwok's fake kubelets, and in CI a skip fails.
  # --with-helm: tests/deploy/test_chart.py lints and renders the Helm chart (a skip fails in CI too).
  bin_dir=$(scripts/ci-controlplane.sh --with-kwok --with-helm | tail -n 1)
  export KUBESCHED_CONTROLPLANE_BIN="$bin_dir"
else
  echo "Go not found: the control-plane (e2e) tests will be skipped; install Go >= 1.24 to run them." >&2
fi
echo "== ruff"; ruff check src tests
echo "== mypy"; mypy
echo "== pytest"; python3 -m pytest -q "$@"
