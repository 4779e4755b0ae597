#!/usr/bin/env bash
# One format for the code: every tracked C++ file (.cc, .h) reads as clang-format formats it with the
# repository's .clang-format (the house style, DESIGN.md §7). A file that does not is named with the
# first lines clang-format would change; `clang-format -i FILE` fixes it. The check must be able to
# fail: a planted badly formatted file must be caught. Needs clang-format 14 (Debian 12's
# `clang-format`, installed by scripts/setup.sh --tests); another major version may format
# differently, so that is refused by name. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/checks.sh  # result(), passed, failed

version=$(clang-format --version 2>/dev/null | grep -oE 'version [0-9]+' | grep -oE '[0-9]+')
if [ "${version:-0}" != 14 ]; then
  result 1 "format/clang-format-14" "clang-format ${version:-missing}: the tree is formatted with clang-format 14 (scripts/setup.sh --tests)"
  echo "$passed passed, $failed failed"
  exit 1
fi

work=$(mktemp -d /tmp/format-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Every tracked C++ file, as clang-format would write it (one clang-format run over them all).
mapfile -t files < <(git ls-files '*.cc' '*.h')
clang-format --dry-run -Werror "${files[@]}" >"$work/all.log" 2>&1
rc=$?
mapfile -t unformatted < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' "$work/all.log" | cut -d: -f1 | sort -u)
[ "$rc" -eq 0 ] && [ "${#unformatted[@]}" -eq 0 ]
result $? "format/every-tracked-cc-and-h-file-as-clang-format-writes-it (${#files[@]} files)" \
  "${#unformatted[@]} files differ (clang-format -i them): ${unformatted[*]:0:10}
$(head -12 "$work/all.log")"

# The check fails on a planted violation: a file in the tree's style folder with its own layout.
mkdir -p "$work/planted" && cp .clang-format "$work/planted/"
printf 'int  planted( int a ){return a;}\n' >"$work/planted/planted.cc"
! clang-format --dry-run -Werror "$work/planted/planted.cc" >/dev/null 2>&1
result $? "format/a-planted-badly-formatted-file-is-caught"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
