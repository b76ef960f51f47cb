# SPDX-License-Identifier: MIT
# systemd-journald as a plain process, its sockets and volatile journal under ROOT (runtime/,
# logs/), the journal kept up to MAX_USE (default 64M; past it journald deletes its oldest
# entries). Run as
#   unshare --mount --propagation private /bin/sh journald_start.sh ROOT [MAX_USE]
# so the mounts over /run stay in that namespace; the process becomes journald (exec), so its
# pid is journald's. Used by tests/journald_sink_test.cpp and bench/journald_burst.py.
set -e
root=$1
mount -t tmpfs fieldlog-journald-test /run
mkdir -p /run/systemd/journal /run/log/journal /run/systemd/journald.conf.d
mount --bind "$root/runtime" /run/systemd/journal
mount --bind "$root/logs" /run/log/journal
printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=%s\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\nRateLimitBurst=0\n' "${2:-64M}" \
  > /run/systemd/journald.conf.d/test.conf
exec /lib/systemd/systemd-journald
