#!/bin/sh
# with-latchd.sh COMMAND...: run COMMAND (mvn test, gradle test, ...) against
# a fresh latchd on an ephemeral port: REDIS_HOST, REDIS_PORT and REDIS_URL
# say where. latchd is stopped afterwards; COMMAND's exit status is kept.
set -eu
dir=$(mktemp -d)
"${LATCHD_BIN:-latchd}" --port 0 --port-file "$dir/port" --logfile "$dir/latchd.log" \
  --enable-clock-control yes >/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
tries=0
until [ -s "$dir/port" ]; do   # written atomically once latchd listens
  if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -ge 1000 ]; then
    cat "$dir/latchd.log" >&2
    exit 1
  fi
  tries=$((tries + 1))
  sleep 0.01
done
REDIS_HOST=127.0.0.1
REDIS_PORT=$(cat "$dir/port")
REDIS_URL="redis://$REDIS_HOST:$REDIS_PORT"
export REDIS_HOST REDIS_PORT REDIS_URL
"$@"
