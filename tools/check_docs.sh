#!/bin/sh
# check_docs.sh WARNINGS_LOG - fails (listing them) when doxygen found a
# public function, macro, type, enum or struct of xrt.h without a comment.
# Other warnings (undocumented struct fields and enum values, links in
# README.md) are counted, not fatal.
set -u
log=${1:?usage: check_docs.sh WARNINGS_LOG}
[ -f "$log" ] || { echo "check_docs: no $log" >&2; exit 2; }
missing=$(grep -E 'is not documented' "$log" |
  grep -E '\((function|macro definition|typedef|enumeration)\)|Compound ' |
  sed 's/.*warning: //')
others=$(grep -c 'warning:' "$log")
if [ -n "$missing" ]; then
  echo "$missing"
  echo "check_docs: $(echo "$missing" | wc -l) public declarations of xrt.h are undocumented"
  exit 1
fi
echo "check_docs: every public function, macro, type and struct of xrt.h is documented ($others other doxygen warnings in $log)"
