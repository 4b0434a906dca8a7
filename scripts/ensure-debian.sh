#!/usr/bin/env bash
# Prints the path of a real server from Debian that tests start on loopback
# (and stop after): squid, the forward proxy of the proxy tests; nginx and
# haproxy, the limiters of the pacing tests; redis-server, the store that
# runs on several machines share their pace in. Installs the package when it
# is missing. The tests run each with a configuration of their own: no service
# is started here, and one the package starts is stopped.
#
#   scripts/ensure-debian.sh squid|nginx|haproxy|redis-server
set -euo pipefail
name="${1:?usage: ensure-debian.sh squid|nginx|haproxy|redis-server}"
case "$name" in
  squid | nginx | haproxy | redis-server) ;;
  *) echo "ensure-debian.sh: $name is none of squid, nginx, haproxy, redis-server" >&2; exit 2 ;;
esac
# Debian puts the servers in /usr/sbin, but Redis in /usr/bin.
found() {
  for bin in "$(command -v "$name" 2>/dev/null || true)" "/usr/sbin/$name" "/usr/bin/$name"; do
    if [ -n "$bin" ] && [ -x "$bin" ]; then
      echo "$bin"
      return 0
    fi
  done
  return 1
}
found && exit 0
echo "installing Debian's $name for the tests (once)" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$name"; } >&2
# A package's own service is no part of the tests.
{ $sudo service "$name" stop || true; } >/dev/null 2>&1
found
