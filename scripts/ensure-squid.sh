#!/usr/bin/env bash
# Prints the path of Debian's squid, the real forward proxy the proxy tests
# start on loopback (and stop after); installs the package when it is
# missing. The tests run their own squid with a configuration of their own:
# no service is started here.
set -euo pipefail
for bin in "$(command -v squid 2>/dev/null || true)" /usr/sbin/squid; do
  if [ -n "$bin" ] && [ -x "$bin" ]; then
    echo "$bin"
    exit 0
  fi
done
echo "installing Debian's squid for the proxy tests (once)" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq squid; } >&2
# A package's own service is no part of the tests.
{ $sudo service squid stop || true; } >/dev/null 2>&1
echo /usr/sbin/squid
