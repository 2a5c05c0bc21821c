#!/usr/bin/env bash
# Install everything the test suite needs and run all of it: lint, types, unit, e2e.
# The e2e tests need the real control plane (kube-apiserver + etcd, and kwok) built from the Go module
# proxy by scripts/controlplane.sh; it is built (or reused from the cache) when Go is available.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,browser,sweep,ray,bound]'
# The HTML report is checked in a real headless Chromium (Debian's package); in CI its absence fails
# that test rather than skipping it.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "== installing chromium (apt-get)" >&2
  apt_get=(apt-get); [ "$(id -u)" = 0 ] || apt_get=(sudo -n apt-get)
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -q >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >/dev/null 2>&1; } \
    || echo "could not install chromium: the HTML report's browser test will fail in CI" >&2
fi
if command -v go >/dev/null 2>&1; then
  # --with-kwok: tests/e2e/test_controlplane.py runs kwok's fake kubelets, and in CI a skip fails.
  # --with-helm: tests/deploy/test_chart.py lints and renders the Helm chart (a skip fails in CI too).
  # --with-kcm: tests/e2e/test_kube_controller_manager.py, test_kube_volume_binding.py and
  # test_kube_rbac.py run kube-controller-manager's PV controller, on every release (a skip fails in CI).
  bin_dir=$(scripts/ci-controlplane.sh --with-kcm --with-kwok --with-helm | tail -n 1)
  export KUBESCHED_CONTROLPLANE_BIN="$bin_dir"
else
  echo "Go not found: the control-plane (e2e) tests will be skipped; install Go >= 1.24 to run them." >&2
fi
echo "== ruff"; ruff check src tests
echo "== mypy"; mypy
echo "== pytest"; python3 -m pytest -q "$@"

# The other supported Pythons (pyproject: >= 3.11; issue 16): the unit suite on each, in a fresh
# virtual environment. In CI a missing interpreter fails the run; elsewhere it is skipped.
find_python() {  # prints the path of a working python<minor>, or nothing
  local minor=$1 candidate
  for candidate in "python$minor" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/"python$minor"; do
    if "$candidate" -c 'import sys' >/dev/null 2>&1; then
      command -v "$candidate" || echo "$candidate"
      return 0
    fi
  done
}
for minor in 3.12 3.13; do
  py=$(find_python "$minor")
  if [ -z "$py" ]; then
    if [ "${CI:-}" = "true" ]; then
      echo "python$minor not found: CI runs the unit suite on Python 3.11, 3.12 and 3.13" >&2
      exit 1
    fi
    echo "python$minor not found: its unit suite is skipped" >&2
    continue
  fi
  env_dir=$(mktemp -d "${TMPDIR:-/tmp}/kubesched-py$minor.XXXXXX")
  echo "== pytest on Python $minor ($py)"
  "$py" -m venv "$env_dir"
  "$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test,sweep,bound]'
  "$env_dir/bin/python" -m pytest -q -m "not slow" --ignore=tests/e2e -p no:cacheprovider
  rm -rf "$env_dir"
done
