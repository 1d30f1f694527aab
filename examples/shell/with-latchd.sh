#!/bin/sh
# with-latchd.sh COMMAND...: run COMMAND (mvn test, gradle test, ...) against
# a fresh latchd on an ephemeral port: REDIS_HOST, REDIS_PORT and REDIS_URL
# say where. latchd is stopped afterwards; COMMAND's exit status is kept.
# On SIGTERM/SIGINT/SIGHUP both COMMAND and latchd are stopped at once.
set -eu
bin=${LATCHD_BIN:-latchd}
case $bin in
  */*) if [ -f "$bin" ] && [ -x "$bin" ]; then found=$bin; else found=''; fi ;;
  *) found=$(command -v "$bin" 2>/dev/null || :) ;;
esac
if [ -z "$found" ]; then
  echo "with-latchd.sh: no latchd binary at '$bin' (put latchd on PATH or set LATCHD_BIN)" >&2
  exit 127
fi
dir=$(mktemp -d)
pid='' cmd=''
stop() {   # the EXIT trap
  if [ -n "$cmd" ]; then kill "$cmd" 2>/dev/null || :; wait "$cmd" 2>/dev/null || :; fi
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || :; wait "$pid" 2>/dev/null || :; fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
"$bin" --port 0 --port-file "$dir/port" --logfile "$dir/latchd.log" \
  --enable-clock-control yes >/dev/null </dev/null &
pid=$!
tries=0
until [ -s "$dir/port" ]; do   # written atomically once latchd listens
  if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -ge 1000 ]; then
    echo "with-latchd.sh: latchd did not start" >&2
    if [ -f "$dir/latchd.log" ]; then cat "$dir/latchd.log" >&2; fi
    exit 1
  fi
  tries=$((tries + 1))
  sleep 0.01
done
REDIS_HOST=127.0.0.1
REDIS_PORT=$(cat "$dir/port")
REDIS_URL="redis://$REDIS_HOST:$REDIS_PORT"
export REDIS_HOST REDIS_PORT REDIS_URL
# In the background so a signal's trap runs at once, not after COMMAND ends;
# fd 3 hands COMMAND the wrapper's stdin (a background job would get /dev/null).
exec 3<&0
"$@" <&3 3<&- &
cmd=$!
status=0
wait "$cmd" || status=$?
cmd=
exit "$status"
