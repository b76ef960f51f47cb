// SPDX-License-Identifier: MIT
// The example service exporting to OTLP (--otlp): started against a receiver on loopback, asked
// once for /healthz, stopped with SIGTERM; every record it logged must reach the receiver,
// decoded by the SDK's generated code, with the configuration's resource (OTEL_SERVICE_NAME over
// the file's [resource]) and its logger as the scope.
// Usage: service_test.js <fieldlog_http_service> <examples/fieldlog.toml>
'use strict';

const assert = require('assert');
const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { Receiver } = require('./receiver.js');

function get(port, route) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: route }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

async function waitFor(check, what) {
  for (let i = 0; i < 600; ++i) {
    const value = check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  const [service, config] = process.argv.slice(2);
  const receiver = new Receiver();
  await receiver.start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fieldlog-otlp-service-'));
  const portFile = path.join(dir, 'port');
  const env = { ...process.env, OTEL_SERVICE_NAME: 'checkout-otlp' };
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_EXPORTER_')) delete env[name];
  const child = spawn(service, [`--config=${config}`, '--port=0', `--port-file=${portFile}`, `--otlp=${receiver.endpoint}`],
                      { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const port = Number(await waitFor(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim(), 'the port'));
  assert.strictEqual(await get(port, '/healthz'), 200);
  child.kill('SIGTERM');
  assert.deepStrictEqual(await exited, { code: 0, signal: null });
  await receiver.stop();
  fs.rmSync(dir, { recursive: true, force: true });

  const records = receiver.accepted.flatMap((request) => request.records);
  const messages = records.map((r) => r.body);
  for (const expected of ['listening', 'stopping', 'stopped']) {
    assert(messages.some((m) => JSON.stringify(m).includes(expected)), `no "${expected}" record among ${JSON.stringify(messages)}`);
  }
  for (const r of records) {
    assert.strictEqual(r.scope, 'http', `a record of scope ${r.scope}`);
    const resource = new Map(r.resource);
    assert.deepStrictEqual(resource.get('service.name'), { string: 'checkout-otlp' }, JSON.stringify(r.resource));
    assert.deepStrictEqual(resource.get('service.version'), { string: '1.4.2' }, JSON.stringify(r.resource));
  }
  console.log(`service: ${records.length} records received, all of scope http, with the file's resource and OTEL_SERVICE_NAME`);
}

main().catch((error) => {
  console.error(error.stack || error);
  process.exit(1);
});
