#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The time zone oracle: Python's zoneinfo (standard library, the system's tzdata) against
fieldlog, which formats the same instants through tests/tz_format.cpp.

For every zone zoneinfo lists (without the posix/ and right/ copies): 1,000 pseudo-random
instants of 1900-2100 and every instant of 2037-2040 where the UTC offset changes, with the
seconds before and after; for a sample of 20 zones also 1,000 instants of 2100-9999 and the
changes of 9990-9998. Both must write the same wall time and offset. Offsets with seconds (local
mean time) follow fieldlog's documented rule: the offset truncated toward zero to whole minutes,
the wall time computed from it, so the text names the exact instant.

Usage: tz_oracle.py <tz_format binary>. Exits 1 on any mismatch.
"""
import datetime
import random
import subprocess
import sys
import zoneinfo

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1)
# Files of the tzdata tree that date, and so fieldlog, does not list as zones ("Factory" is no
# place: zic's placeholder for machines without a configured zone).
NOT_ZONES = {"Factory"}


def seconds(year, month=1, day=1):
    return int(datetime.datetime(year, month, day, tzinfo=UTC).timestamp())


def offset(zone, s):
    return datetime.datetime.fromtimestamp(s, zone).utcoffset()


def changes(zone, first_year, last_year):
    """UTC seconds where the zone's offset changes in [first_year, last_year]: a 12-hour scan,
    then a bisection to the second."""
    found = []
    t, end = seconds(first_year), seconds(last_year + 1)
    before = offset(zone, t)
    while t < end:
        n = t + 12 * 3600
        after = offset(zone, n)
        if after != before:
            lo, hi = t, n
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset(zone, mid) == before:
                    lo = mid
                else:
                    hi = mid
            found.append(hi)
        t, before = n, after
    return found


def expected(zone, s):
    """fieldlog's text: the offset truncated toward zero to whole minutes, the wall time from it."""
    off = int(offset(zone, s).total_seconds())
    minutes = abs(off) // 60 * (1 if off >= 0 else -1)
    wall = EPOCH + datetime.timedelta(seconds=s + minutes * 60)
    sign = '-' if minutes < 0 else '+'
    return f"{wall.strftime('%Y-%m-%dT%H:%M:%S')}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def instants(zone, rng, near_changes, far):
    chosen = [rng.randrange(seconds(1900), seconds(2100)) for _ in range(1000)]
    for s in near_changes:
        chosen += [s - 1, s, s + 1]
    if far:
        chosen += [rng.randrange(seconds(2100), seconds(9999, 12, 30)) for _ in range(1000)]
        for s in changes(zone, 9990, 9998):
            chosen += [s - 1, s, s + 1]
    return chosen


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    names = []
    for name in sorted(zoneinfo.available_timezones()):
        if name.startswith(('posix/', 'right/')) or name in NOT_ZONES:
            continue
        try:
            names.append((name, zoneinfo.ZoneInfo(name)))
        except (ValueError, OSError):
            continue
    near_changes = {name: changes(zone, 2037, 2040) for name, zone in names}
    # The sample for years to 9999: zones that still change offset after 2037.
    far = set(random.Random(21).sample(sorted(n for n, c in near_changes.items() if c), 20))
    request, cases = [], []
    for name, zone in names:
        rng = random.Random(name)
        request.append(f"zone {name}")
        for s in instants(zone, rng, near_changes[name], name in far):
            request.append(str(s))
            cases.append((name, s, expected(zone, s)))
    result = subprocess.run([sys.argv[1]], input="\n".join(request) + "\n", capture_output=True, text=True, check=True)
    actual = result.stdout.splitlines()
    if len(actual) != len(cases):
        sys.exit(f"tz_oracle: {len(cases)} instants sent, {len(actual)} lines back")
    mismatches = [(c, a) for c, a in zip(cases, actual) if c[2] != a]
    for (name, s, want), got in mismatches[:20]:
        print(f"{name} {s}: zoneinfo {want} fieldlog {got}")
    far_zones = ", ".join(sorted(far))
    print(f"tz_oracle: {len(names)} zones, {len(cases)} instants, {len(mismatches)} mismatches "
          f"(years to 9999 in {far_zones})")
    if result.stderr:
        print(result.stderr, end="", file=sys.stderr)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
