#!/usr/bin/env bash
# Prints the path of a real server from Debian that tests start on loopback
# (and stop after): squid, the forward proxy of the proxy tests; nginx and
# haproxy, the limiters of the pacing tests. Installs the package when it is
# missing. The tests run each with a configuration of their own: no service
# is started here, and one the package starts is stopped.
#
#   scripts/ensure-debian.sh squid|nginx|haproxy
set -euo pipefail
name="${1:?usage: ensure-debian.sh squid|nginx|haproxy}"
case "$name" in
  squid | nginx | haproxy) ;;
  *) echo "ensure-debian.sh: $name is none of squid, nginx, haproxy" >&2; exit 2 ;;
esac
for bin in "$(command -v "$name" 2>/dev/null || true)" "/usr/sbin/$name"; do
  if [ -n "$bin" ] && [ -x "$bin" ]; then
    echo "$bin"
    exit 0
  fi
done
echo "installing Debian's $name for the tests (once)" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$name"; } >&2
# A package's own service is no part of the tests.
{ $sudo service "$name" stop || true; } >/dev/null 2>&1
echo "/usr/sbin/$name"
