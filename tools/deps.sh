#!/bin/sh
# Checks the build dependencies of xrt and installs them on Debian/Ubuntu
# when run as root:
#   cmocka  - unit-test framework for test/test_*.c
#   xxHash  - fast hashing (compile-cache keys)
# Called by `make test` and `make run`.
set -eu

PKGS="libcmocka-dev libxxhash-dev"
missing=""
[ -f /usr/include/cmocka.h ] || missing="$missing cmocka.h"
[ -f /usr/include/xxhash.h ] || missing="$missing xxhash.h"
[ -z "$missing" ] && exit 0

echo "tools/deps.sh: missing headers:$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends $PKGS
  exit 0
fi
echo "tools/deps.sh: install them with:"
echo "  sudo apt-get update && sudo apt-get install -y $PKGS"
exit 1
