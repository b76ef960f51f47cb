// SPDX-License-Identifier: MIT
// The OTLP sink's requests, decoded by the OpenTelemetry JavaScript SDK's generated code
// (protobuf) and by JSON.parse (OTLP/JSON), compared field by field with what otlp_client's
// `kinds` scenario logged; its OTLP/JSON also against the SDK's own JSON serialization of the
// same records. Usage: node decode_test.js <otlp_client>
'use strict';

const assert = require('assert');
const { JsonLogsSerializer } = require('@opentelemetry/otlp-transformer');
const { Receiver, runClient } = require('./receiver.js');

const client = process.argv[2];

const TIME = '1796027891123456789';
const WHEN = new Date(1796027891 * 1000).toISOString().replace('.000Z', '.123456789Z');
const str = (s) => ({ string: s });
const int = (i) => ({ int: String(i) });
const dbl = (d) => ({ double: String(d) });
const NULL = { null: true };
const RESOURCE = [
  ['service.name', str('checkout')],
  ['service.version', str('1.4.2')],
  ['replicas', int(3)],
  ['ratio', dbl(0.5)],
  ['canary', { bool: true }],
];
const LARGE = 'x'.repeat(1 << 20);

function record(scope, severityNumber, severityText, body, attributes, trace) {
  return {
    resource: RESOURCE,
    scope,
    time: TIME,
    observedTime: TIME,
    severityNumber,
    severityText,
    body: str(body),
    attributes,
    traceId: trace ? '4bf92f3577b34da6a3ce929d0e0e4736' : undefined,
    spanId: trace ? '00f067aa0ba902b7' : undefined,
    flags: trace ? 1 : undefined,
  };
}

// What the `kinds` scenario logs, in order.
const EXPECTED = [
  record('http', 9, 'info', 'request done', [
    ['version', int(3)],
    ['request_id', str('r-1')],
    ['status', int(200)],
    ['neg', int(-5)],
    ['min', int('-9223372036854775808')],
    ['big', str('18446744073709551615')],
    ['small_unsigned', int(7)],
    ['pi', dbl(3.25)],
    ['nan', { double: 'NaN' }],
    ['inf', { double: 'Infinity' }],
    ['ninf', { double: '-Infinity' }],
    ['ok', { bool: true }],
    ['no', { bool: false }],
    ['nothing', NULL],
    ['path', str('/a b')],
    ['latency', str('1.25ms')],
    ['when', str(WHEN)],
    ['ec', str('Connection refused (system:111)')],
    ['raw', { bytes: '0001feff' }],
    ['user', { kvlist: [['name', str('ann')], ['id', int(7)], ['tags', { array: [int(1), str('two'), dbl(2.5)] }]] }],
    ['list', { array: [int(1), int(2), int(3)] }],
    ['map', { kvlist: [['a', int(1)], ['b', int(2)]] }],
    ['grid', { kvlist: [['rows', int(2)], ['cols', int(3)], ['cells', { array: [int(0), int(1), str('end')] }]] }],
    ['none', NULL],
    ['five', int(5)],
    ['dup', str('second')],
    ['service', str('override')],
    ['password', str('[REDACTED]')],
    ['nested', { kvlist: [['api_token', str('[REDACTED]')], ['keep', int(1)]] }],
  ], true),
  record('db', 1, 'trace', 'at trace', []),
  record('db', 5, 'debug', 'at debug', []),
  record('db', 9, 'info', 'at info', []),
  record('db', 13, 'warn', 'at warn', []),
  record('db', 17, 'error', 'at error', []),
  record('db', 21, 'fatal', 'at fatal', []),
  record('db', 9, 'info', 'formatted 1 of 2', []),
  record('db', 9, 'info', 'large', [['large', str(LARGE)]]),
  record('db', 9, 'info', 'bad \uFFFD\uFFFD end', [
    ['k\uFFFD', str('a\uFFFD\uFFFD\uFFFDb')],
    ['ok', str('caf\u00e9')],
  ]),
];

/// The part of a field that a failure message can show (a 1 MiB string is cut).
const shown = (v) => {
  const text = String(JSON.stringify(v));
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

function compareRecords(what, got, expected) {
  assert.strictEqual(got.length, expected.length, `${what}: ${got.length} records, expected ${expected.length}`);
  let fields = 0;
  for (let i = 0; i < expected.length; ++i) {
    for (const key of Object.keys(expected[i])) {
      if (key === 'attributes') {
        const g = got[i].attributes;
        const e = expected[i].attributes;
        assert.deepStrictEqual(g.map((kv) => kv[0]), e.map((kv) => kv[0]), `${what}: record ${i}: attribute keys`);
        for (let a = 0; a < e.length; ++a) {
          assert.deepStrictEqual(g[a][1], e[a][1], `${what}: record ${i}: attribute ${e[a][0]}: ${shown(g[a][1])}, expected ${shown(e[a][1])}`);
          ++fields;
        }
        continue;
      }
      assert.deepStrictEqual(got[i][key], expected[i][key], `${what}: record ${i}: ${key}: ${shown(got[i][key])}, expected ${shown(expected[i][key])}`);
      ++fields;
    }
  }
  return fields;
}

// ---- the SDK's own JSON of the same records ------------------------------------------------

/// A normalized value as the SDK's attribute value, or undefined where the SDK has no exact
/// form for it (bytes, null, non-finite or integral doubles, integers past 2^53, 64-bit ints
/// written as strings by OTLP/JSON but as numbers by the SDK are normalized below).
function sdkValue(v) {
  if ('string' in v) return v.string;
  if ('bool' in v) return v.bool;
  if ('int' in v) {
    const n = Number(v.int);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  if ('double' in v) {
    const n = Number(v.double);
    return Number.isFinite(n) && !Number.isInteger(n) ? n : undefined;
  }
  if ('array' in v) {
    const values = v.array.map(sdkValue);
    return values.includes(undefined) ? undefined : values;
  }
  if ('kvlist' in v) {
    const object = {};
    for (const [k, x] of v.kvlist) {
      const value = sdkValue(x);
      if (value === undefined) return undefined;
      object[k] = value;
    }
    return object;
  }
  return undefined;
}

/// OTLP/JSON with the SDK's liberties undone: integers as strings (the SDK writes numbers),
/// empty and zero defaults dropped.
function canonicalJson(value) {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || (k === 'droppedAttributesCount' && v === 0)) continue;
    out[k] = k === 'intValue' || k.endsWith('UnixNano') ? String(v) : canonicalJson(v);
  }
  return out;
}

function compareWithSdkJson(ourJson) {
  const resource = { attributes: {} };
  for (const [k, v] of RESOURCE) resource.attributes[k] = sdkValue(v);
  const keep = EXPECTED.map((r) => new Set(r.attributes.filter(([, v]) => sdkValue(v) !== undefined).map(([k]) => k)));
  const sdkRecords = EXPECTED.map((r, i) => {
    const attributes = {};
    for (const [k, v] of r.attributes) if (keep[i].has(k)) attributes[k] = sdkValue(v);
    return {
      hrTime: [1796027891, 123456789],
      hrTimeObserved: [1796027891, 123456789],
      severityNumber: r.severityNumber,
      severityText: r.severityText,
      body: r.body.string,
      attributes,
      droppedAttributesCount: 0,
      spanContext: r.traceId ? { traceId: r.traceId, spanId: r.spanId, traceFlags: r.flags } : undefined,
      resource,
      instrumentationScope: { name: r.scope },
    };
  });
  const sdk = canonicalJson(JSON.parse(Buffer.from(JsonLogsSerializer.serializeRequest(sdkRecords)).toString('utf8')));
  assert.strictEqual(sdk.resourceLogs[0].scopeLogs.flatMap((sl) => sl.logRecords).length, EXPECTED.length, 'the SDK\'s JSON');
  // Ours, with the attributes the SDK cannot write exactly left out, from one request per scope run.
  const merged = { resourceLogs: [{ resource: ourJson[0].resourceLogs[0].resource, scopeLogs: [] }] };
  let index = 0;
  for (const request of ourJson) {
    for (const sl of request.resourceLogs[0].scopeLogs) {
      const last = merged.resourceLogs[0].scopeLogs.at(-1);
      const records = sl.logRecords.map((r) => {
        const k = keep[index++];
        return { ...r, attributes: r.attributes.filter((kv) => k.has(kv.key)) };
      });
      if (last && last.scope.name === sl.scope.name) {
        last.logRecords.push(...records);
      } else {
        merged.resourceLogs[0].scopeLogs.push({ scope: sl.scope, logRecords: records });
      }
    }
  }
  assert.deepStrictEqual(canonicalJson(merged), sdk, 'OTLP/JSON differs from the SDK\'s JSON serialization');
}

/// An OTLP sink that a configuration file names: the file's [resource] with OTEL_SERVICE_NAME
/// over it, the call facts under the semantic conventions' keys, a duration in nanoseconds as the
/// file's `duration` says. Returns the fields compared.
async function checkConfigured() {
  const env = { ...process.env, OTEL_SERVICE_NAME: 'from-env' };
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_') && name !== 'OTEL_SERVICE_NAME') delete env[name];
  let checked = 0;
  for (const encoding of ['protobuf', 'json']) {
    const receiver = new Receiver();
    await receiver.start();
    const { counters: where } = await runClient(client, ['configured', receiver.endpoint, `encoding=${encoding}`], env);
    await receiver.stop();
    assert.ok(receiver.accepted.every((r) => r.encoding === encoding), `configured ${encoding}: Content-Type`);
    checked += compareRecords(`configured ${encoding}`, receiver.records(), [{
      resource: [['service.name', str('from-env')], ['replicas', int(3)], ['service.version', str('1.4.2')]],
      scope: 'svc',
      time: TIME,
      observedTime: TIME,
      severityNumber: 9,
      severityText: 'info',
      body: str('configured'),
      attributes: [
        ['code.file.path', str(where.file)],
        ['code.line.number', int(where.line)],
        ['code.function.name', str(where.function)],
        ['thread.id', int(where.tid)],
        ['took', int(1500000)],
      ],
    }]);
    console.log(`configured ${encoding}: the file's resource, the call facts and a duration in nanoseconds`);
  }
  return checked;
}

async function main() {
  let checked = 0;
  for (const [encoding, extra] of [['protobuf', []], ['json', ['encoding=json']], ['protobuf', ['gzip=1']]]) {
    const receiver = new Receiver();
    await receiver.start();
    const { counters } = await runClient(client, ['kinds', receiver.endpoint, ...extra]);
    await receiver.stop();
    const what = `${encoding}${extra.includes('gzip=1') ? '+gzip' : ''}`;
    assert.ok(receiver.accepted.every((r) => r.encoding === encoding), `${what}: Content-Type`);
    assert.strictEqual(counters.dropped, 0, `${what}: the sink dropped records`);
    assert.strictEqual(counters.records, EXPECTED.length, `${what}: records handed to the sink`);
    checked += compareRecords(what, receiver.records(), EXPECTED);
    if (encoding === 'json') compareWithSdkJson(receiver.accepted.map((r) => r.json));
    if (extra.includes('gzip=1')) assert.ok(receiver.accepted.every((r) => r.gzip), 'gzip: bodies not compressed');
    console.log(`${what}: ${receiver.accepted.length} requests, ${EXPECTED.length} records, fields equal`);
  }
  checked += await checkConfigured();
  console.log(`ok: ${checked} fields compared`);
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
