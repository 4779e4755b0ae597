#!/usr/bin/env bash
# The include graph of the tree by folder: one line "from -> to  (N includes)" for every folder
# whose sources include a header of another folder (#include "folder/..."), so the direction of
# the layers can be read at a glance (tests/suites/layers_tests.sh enforces it). A folder is the
# top-level one (transport/tcp counts as transport), except tools/perf (the one tool that runs the
# engine, a program of its own); tests/, bench/ and fuzz/ are left out.
# Usage: bash scripts/include_graph.sh [folder...]   (default: every source folder)
set -euo pipefail
cd "$(dirname "$0")/.."
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(common model transport collectives trace workload libshim phynet tools)
grep -rHoE '^\s*#\s*include\s*"[^"]+"' "${folders[@]}" --include='*.cc' --include='*.h' |
  sed -E 's#^([^:]*):.*"([^"]+)"$#\1 \2#' |
  awk -v known=" common model transport collectives trace workload libshim phynet tools " '
    function folder(path, parts) { split(path, parts, "/"); return path ~ /^tools\/perf\// ? "tools/perf" : parts[1] }
    { from = folder($1); to = folder($2); split(to, top, "/") }
    from != to && index(known, " " top[1] " ") { count[from " -> " to]++ }
    END { for (e in count) printf "%s  (%d includes)\n", e, count[e] }' |
  sort
