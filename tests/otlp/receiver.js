// SPDX-License-Identifier: MIT
// An OTLP/HTTP logs receiver on loopback for the tests: decodes each request with the
// OpenTelemetry JavaScript SDK's generated code (protobuf) or JSON.parse (OTLP/JSON), keeps the
// records in one normalized form, and answers as the test's `answer` function says.
'use strict';

const http = require('http');
const https = require('https');
const zlib = require('zlib');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');

const logsService = root.opentelemetry.proto.collector.logs.v1;
const Request = logsService.ExportLogsServiceRequest;
const Response = logsService.ExportLogsServiceResponse;

const hexOf = (base64) => Buffer.from(base64, 'base64').toString('hex');

/// An AnyValue (from toObject or OTLP/JSON) in one form: {kind: value}.
function normalizeValue(v) {
  if (v === undefined || v === null) return { null: true };
  if ('stringValue' in v) return { string: v.stringValue };
  if ('boolValue' in v) return { bool: v.boolValue };
  if ('intValue' in v) return { int: String(v.intValue) };
  if ('doubleValue' in v) {
    const d = v.doubleValue;
    if (typeof d === 'string') return { double: d };
    if (Number.isNaN(d)) return { double: 'NaN' };
    if (d === Infinity) return { double: 'Infinity' };
    if (d === -Infinity) return { double: '-Infinity' };
    return { double: String(d) };
  }
  if ('bytesValue' in v) return { bytes: hexOf(v.bytesValue) };
  if ('arrayValue' in v) return { array: (v.arrayValue.values || []).map(normalizeValue) };
  if ('kvlistValue' in v) return { kvlist: normalizeAttributes(v.kvlistValue.values) };
  return { null: true };
}

function normalizeAttributes(list) {
  return (list || []).map((kv) => [kv.key, normalizeValue(kv.value)]);
}

/// The records of one request (toObject's or OTLP/JSON's shape), each with its resource and scope.
function normalizeRequest(request) {
  const records = [];
  for (const rl of request.resourceLogs || []) {
    const resource = normalizeAttributes((rl.resource || {}).attributes);
    for (const sl of rl.scopeLogs || []) {
      const scope = (sl.scope || {}).name || '';
      for (const r of sl.logRecords || []) {
        records.push({
          resource,
          scope,
          time: String(r.timeUnixNano),
          observedTime: String(r.observedTimeUnixNano),
          severityNumber: r.severityNumber,
          severityText: r.severityText,
          body: normalizeValue(r.body),
          attributes: normalizeAttributes(r.attributes),
          traceId: r.traceId === undefined ? undefined : r.traceId,
          spanId: r.spanId === undefined ? undefined : r.spanId,
          flags: r.flags,
        });
      }
    }
  }
  return records;
}

/// Decodes one request body: {encoding, records, json (OTLP/JSON's parsed object, or undefined)}.
function decode(contentType, body) {
  if (contentType === 'application/x-protobuf') {
    const message = Request.decode(body);
    const object = Request.toObject(message, { longs: String, bytes: String });
    const records = normalizeRequest(object);
    for (const r of records) {
      if (r.traceId !== undefined) r.traceId = hexOf(r.traceId);
      if (r.spanId !== undefined) r.spanId = hexOf(r.spanId);
    }
    return { encoding: 'protobuf', records };
  }
  if (contentType === 'application/json') {
    const json = JSON.parse(body.toString('utf8'));
    return { encoding: 'json', records: normalizeRequest(json), json };
  }
  throw new Error(`unexpected Content-Type ${contentType}`);
}

/// The body of a success answer: a partial success with `rejected` records, or none.
function successBody(contentType, rejected) {
  if (contentType === 'application/json') {
    return Buffer.from(rejected ? JSON.stringify({ partialSuccess: { rejectedLogRecords: String(rejected), errorMessage: 'test' } }) : '{}');
  }
  const message = Response.create(rejected ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage: 'test' } } : {});
  return Buffer.from(Response.encode(message).finish());
}

class Receiver {
  /// `answer(decoded, index)` returns {status, retryAfter, rejected, delayMs, hang}; default 200.
  /// Only requests answered with success are kept in `accepted`. `tls`: HTTPS with node's
  /// https.createServer options ({key, cert, ca, requestCert, rejectUnauthorized}); each
  /// decoded request then has `clientSubject`, the client certificate's subject CN.
  constructor(answer, tls) {
    this.tls = tls;
    this.answer = answer || (() => ({ status: 200 }));
    this.requests = 0;       // requests read whole
    this.accepted = [];      // decoded requests answered with success
    this.sockets = new Set();
    this.server = null;
    this.port = 0;
    this.stopping = false;
  }

  start(port = 0) {
    this.stopping = false;
    const handler = (req, res) => this.handle(req, res);
    this.server = this.tls ? https.createServer(this.tls, handler) : http.createServer(handler);
    this.server.keepAliveTimeout = 60000;
    this.server.on(this.tls ? 'secureConnection' : 'connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = this.server.address().port;
        resolve(this.port);
      });
    });
  }

  get endpoint() {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.port}/v1/logs`;
  }

  /// Stops listening: idle connections are closed now; a request being answered gets its answer
  /// first (and counts), then its connection is closed; one never to be answered is dropped.
  stop() {
    this.stopping = true;
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) {
        if (!socket.busy || socket.hanging) socket.destroy();
      }
    });
  }

  handle(req, res) {
    const socket = req.socket;
    if (this.stopping) {
      socket.destroy();
      return;
    }
    socket.busy = true;
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const contentType = req.headers['content-type'];
      let decoded;
      try {
        decoded = decode(contentType, body);
      } catch (e) {
        this.decodeError = e;
        res.writeHead(400);
        res.end(String(e));
        return;
      }
      decoded.headers = req.headers;
      if (this.tls) decoded.clientSubject = (req.socket.getPeerCertificate().subject || {}).CN;
      decoded.gzip = req.headers['content-encoding'] === 'gzip';
      decoded.at = Date.now();
      const index = this.requests++;
      const how = this.answer(decoded, index) || { status: 200 };
      if (how.hang) {  // accepted, never answered
        socket.hanging = true;
        if (this.stopping) socket.destroy();
        return;
      }
      const respond = () => {
        const status = how.status || 200;
        const headers = { 'Content-Type': contentType };
        if (how.retryAfter !== undefined) headers['Retry-After'] = String(how.retryAfter);
        res.on('finish', () => {
          socket.busy = false;
          if (this.stopping) socket.destroy();
        });
        if (status >= 200 && status < 300) {
          decoded.rejected = how.rejected || 0;
          this.accepted.push(decoded);
          res.writeHead(status, headers);
          res.end(successBody(contentType, how.rejected));
        } else {
          res.writeHead(status, headers);
          res.end('no');
        }
      };
      if (how.delayMs) {
        setTimeout(respond, how.delayMs);
      } else {
        respond();
      }
    });
  }

  /// Every record of the accepted requests, in order.
  records() {
    return this.accepted.flatMap((r) => r.records);
  }
}

/// Runs `client` with `args` (and `env` as its whole environment, when given); resolves with its
/// JSON line of counters.
function runClient(client, args, env) {
  const { spawn } = require('child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env || process.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`client ${args.join(' ')} exited ${code}: ${err}`));
        return;
      }
      resolve({ counters: JSON.parse(out.trim().split('\n').pop()), stderr: err });
    });
  });
}

module.exports = { Receiver, runClient, normalizeRequest, normalizeValue };
