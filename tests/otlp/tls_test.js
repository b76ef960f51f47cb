// SPDX-License-Identifier: MIT
// The OTLP sink over HTTPS to a receiver that requires a client certificate: a CA, the
// receiver's certificate (for 127.0.0.1) and the client's are made here with openssl. With its
// CA file, certificate and key the sink delivers every record and the receiver sees the
// client's name; without a certificate, with one from another CA, or without the CA that
// signed the receiver's, nothing is delivered and every record is counted dropped.
// Usage: node tls_test.js <otlp_client>
'use strict';

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { Receiver, runClient } = require('./receiver.js');

const client = process.argv[2];

function openssl(args) {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/// A CA `name` in `dir`: name.key, name.pem.
function makeCa(dir, name) {
  const key = path.join(dir, `${name}.key`);
  const pem = path.join(dir, `${name}.pem`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', pem, '-days', '2',
    '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  return { key, pem };
}

/// A certificate for `cn` signed by `ca`, with `extensions` (an openssl extension file's lines).
function makeCert(dir, name, cn, ca, extensions) {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const pem = path.join(dir, `${name}.pem`);
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, extensions.join('\n') + '\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.pem, '-CAkey', ca.key, '-CAcreateserial', '-out', pem, '-days', '2',
    '-extfile', ext]);
  return { key, pem };
}

async function main() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch (e) {
    console.log('test skipped: no openssl');
    process.exit(77);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fieldlog-otlp-tls-'));
  try {
    const ca = makeCa(dir, 'ca');
    const stranger = makeCa(dir, 'stranger');
    const server = makeCert(dir, 'server', 'localhost', ca, ['subjectAltName=IP:127.0.0.1,DNS:localhost', 'extendedKeyUsage=serverAuth']);
    const trusted = makeCert(dir, 'client', 'fieldlog-client', ca, ['extendedKeyUsage=clientAuth']);
    const foreign = makeCert(dir, 'foreign', 'someone-else', stranger, ['extendedKeyUsage=clientAuth']);
    const tls = {
      key: fs.readFileSync(server.key),
      cert: fs.readFileSync(server.pem),
      ca: fs.readFileSync(ca.pem),
      requestCert: true,
      rejectUnauthorized: true,
    };
    const count = 200;
    const cases = [
      { what: 'client certificate', args: [`ca_file=${ca.pem}`, `cert_file=${trusted.pem}`, `key_file=${trusted.key}`], delivered: true },
      { what: 'no client certificate', args: [`ca_file=${ca.pem}`], delivered: false },
      { what: 'a certificate of another CA', args: [`ca_file=${ca.pem}`, `cert_file=${foreign.pem}`, `key_file=${foreign.key}`], delivered: false },
      { what: 'an untrusted receiver', args: [`cert_file=${trusted.pem}`, `key_file=${trusted.key}`], delivered: false },
    ];
    for (const c of cases) {
      const receiver = new Receiver(undefined, tls);
      await receiver.start();
      try {
        const { counters } = await runClient(client, ['load', receiver.endpoint, `count=${count}`, 'shutdown_ms=1000', ...c.args]);
        if (c.delivered) {
          assert.strictEqual(receiver.records().length, count, `${c.what}: records delivered`);
          assert.strictEqual(counters.dropped, 0, `${c.what}: dropped`);
          assert.ok(receiver.accepted.every((r) => r.clientSubject === 'fieldlog-client'), `${c.what}: the client's name`);
        } else {
          assert.strictEqual(receiver.requests, 0, `${c.what}: a request got through`);
          assert.strictEqual(counters.dropped, count, `${c.what}: dropped`);
          assert.ok(counters.errors > 0, `${c.what}: no error counted`);
        }
      } finally {
        await receiver.stop();
      }
      console.log(`ok: ${c.what}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
