#!/usr/bin/env bash
# chakra_jsonize.sh - dump a Chakra execution trace (.et, protobuf) as JSON using
# MLCommons Chakra's own reader (chakra_jsonizer). Used to produce/refresh the
# reference ("golden") JSON files under tests/data/chakra/golden/ that the C++
# Chakra reader in this repo is checked against.
#
# Usage:
#   CHAKRA_SRC=/path/to/chakra-source scripts/chakra_jsonize.sh INPUT.et OUTPUT.json
#
# Environment:
#   CHAKRA_SRC       (required) a checkout/export of github.com/mlcommons/chakra
#                    (the tree that holds pyproject.toml and schema/protobuf/et_def.proto).
#   CHAKRA_VENV      Python venv to use/create
#                    (default: ${XDG_CACHE_HOME:-$HOME/.cache}/ncclshim/venv-chakra).
#   PROTOBUF_SPEC    pip requirement for the protobuf runtime (default: protobuf).
#   CHAKRA_REINSTALL set to 1 to reinstall chakra into an existing venv.
#   PYTHON           interpreter used to create the venv (default: python3).
#
# Notes:
#   * chakra is installed with --no-deps: its declared dependencies (graphviz,
#     networkx, pydot, HolisticTraceAnalysis from git) are only needed by the
#     converter/visualizer/trace_link tools, not by the jsonizer, which needs
#     only the protobuf runtime.
#   * chakra's build (setup.py build_grpc via setuptools-grpc + grpcio-tools, pulled
#     from PyPI by pip's isolated build) compiles et_def.proto into
#     et_def_pb2.py; it writes into the source tree, so a temporary copy of
#     CHAKRA_SRC is built, never CHAKRA_SRC itself.
#   * The jsonizer writes GlobalMetadata and then every Node as
#     google.protobuf.json_format.MessageToJson objects concatenated back to back
#     (not one JSON document). Formatting follows the installed protobuf version.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
input=$1
output=$2

: "${CHAKRA_SRC:?set CHAKRA_SRC to a chakra source tree}"
if [[ ! -f "$CHAKRA_SRC/pyproject.toml" || ! -f "$CHAKRA_SRC/schema/protobuf/et_def.proto" ]]; then
    echo "chakra_jsonize: $CHAKRA_SRC does not look like a chakra source tree" >&2
    exit 1
fi
if [[ ! -r "$input" ]]; then
    echo "chakra_jsonize: cannot read $input" >&2
    exit 1
fi

venv=${CHAKRA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclshim/venv-chakra}
py=${PYTHON:-python3}

if [[ ! -x "$venv/bin/python" ]]; then
    echo "chakra_jsonize: creating venv $venv" >&2
    mkdir -p "$(dirname "$venv")"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
fi

if [[ "${CHAKRA_REINSTALL:-0}" == 1 ]] || ! "$venv/bin/python" -c 'import google.protobuf' 2>/dev/null; then
    "$venv/bin/pip" install --quiet "${PROTOBUF_SPEC:-protobuf}"
fi

if [[ "${CHAKRA_REINSTALL:-0}" == 1 || ! -x "$venv/bin/chakra_jsonizer" ]]; then
    build=$(mktemp -d)
    trap 'rm -rf "$build"' EXIT
    cp -r "$CHAKRA_SRC/." "$build/"
    rm -f "$build"/schema/protobuf/et_def_pb2*.py "$build"/schema/protobuf/et_def_pb2*.pyi
    "$venv/bin/pip" install --quiet --no-deps --force-reinstall "$build"
fi

"$venv/bin/chakra_jsonizer" --input_filename "$input" --output_filename "$output"
echo "chakra_jsonize: wrote $output (protobuf $("$venv/bin/python" -c 'import google.protobuf as p; print(p.__version__)'))" >&2
