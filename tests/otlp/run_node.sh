#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one OTLP test script with Node, or skips (77) when Node or the SDK package is missing.
node=$1
shift
here=$(dirname "$0")
if [ -z "$node" ] || [ ! -x "$node" ]; then
  echo "test skipped: no node"
  exit 77
fi
if [ ! -f "$here/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ]; then
  echo "test skipped: no @opentelemetry/otlp-transformer in tests/otlp/node_modules (npm ci there)"
  exit 77
fi
exec "$node" "$@"
