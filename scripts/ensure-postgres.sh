#!/usr/bin/env bash
# Make Debian's PostgreSQL server binaries available for the test suite, which starts its own
# throwaway server (initdb + pg_ctl on a free loopback port). Installs them when missing and
# we are root; otherwise says how. Never starts a service.
set -euo pipefail
if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir 2>/dev/null)/initdb" ]; then
  exit 0
fi
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  echo "ensure-postgres: installing Debian's postgresql package" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
else
  echo "ensure-postgres: PostgreSQL server binaries not found; install them with" \
       "'sudo apt-get install postgresql' (Postgres tests skip without them, except in CI)" >&2
fi
