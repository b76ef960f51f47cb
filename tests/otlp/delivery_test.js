// SPDX-License-Identifier: MIT
// The OTLP sink's delivery against a receiver that misbehaves on purpose: stopped and restarted
// under load, 429 with Retry-After, 400, a partial success, slow answers, no answer at all, and
// a close() that runs out of time. Every check is on counts (each record delivered exactly once,
// or dropped and counted); times are only bounds on how long to wait, except one lower bound:
// a Retry-After of 1 s must hold the next try back at least that long.
// Usage: node delivery_test.js <otlp_client>
'use strict';

const assert = require('assert');
const { Receiver, runClient } = require('./receiver.js');

const client = process.argv[2];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// The `seq` of each record the receiver accepted.
function seqs(receiver) {
  return receiver.records().map((r) => {
    const seq = r.attributes.find(([k]) => k === 'seq');
    return Number(seq[1].int);
  });
}

/// Every seq in [0, count) but those in `lost`, exactly once.
function assertExactlyOnce(what, receiver, count, lost = new Set()) {
  const seen = new Map();
  for (const s of seqs(receiver)) seen.set(s, (seen.get(s) || 0) + 1);
  const twice = [...seen].filter(([, n]) => n > 1).map(([s]) => s);
  assert.deepStrictEqual(twice.slice(0, 10), [], `${what}: records delivered more than once`);
  for (const s of lost) assert.ok(!seen.has(s), `${what}: record ${s} was to be dropped but arrived`);
  const missing = [];
  for (let s = 0; s < count; ++s) if (!lost.has(s) && !seen.has(s)) missing.push(s);
  return missing;
}

async function withReceiver(answer, run) {
  const receiver = new Receiver(answer);
  await receiver.start();
  try {
    return await run(receiver);
  } finally {
    if (!receiver.stopping) await receiver.stop();
  }
}

const scenarios = {
  // Ten stops and restarts while records flow; the queue holds them all: none is lost.
  async restart_within_bound() {
    await restartUnderLoad('restart_within_bound', ['queue_bytes=67108864'], true);
  },
  // The same with a small queue: what does not fit is dropped, and counted exactly.
  async restart_small_queue() {
    await restartUnderLoad('restart_small_queue', ['queue_bytes=65536'], false);
  },
  async retry_after_429() {
    let refusedAt = 0;
    let nextAt = 0;
    await withReceiver((request, index) => {
      if (index === 0) {
        refusedAt = request.at;
        return { status: 429, retryAfter: 1 };
      }
      if (index === 1) nextAt = request.at;
      return { status: 200 };
    }, async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=50', 'batch_size=100', 'linger_ms=50']);
      assert.deepStrictEqual(assertExactlyOnce('429', receiver, 50), [], '429: records missing');
      assert.strictEqual(counters.dropped, 0, '429: dropped');
      assert.ok(counters.retries >= 1, '429: no retry');
      assert.ok(nextAt - refusedAt >= 950, `429: tried again after ${nextAt - refusedAt} ms, Retry-After said 1 s`);
    });
  },
  async bad_request_400() {
    let refused = [];
    await withReceiver((request, index) => {
      if (index === 0) {
        refused = request.records.map((r) => Number(r.attributes.find(([k]) => k === 'seq')[1].int));
        return { status: 400 };
      }
      return { status: 200 };
    }, async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=300', 'batch_size=100', 'pause_every=50', 'pause_ms=20']);
      assert.ok(refused.length > 0, '400: nothing was refused');
      assert.deepStrictEqual(assertExactlyOnce('400', receiver, 300, new Set(refused)), [], '400: records missing');
      assert.strictEqual(counters.refused, refused.length, '400: refused count');
      assert.strictEqual(counters.dropped, refused.length, '400: dropped count');
      assert.ok(counters.errors >= 1, '400: no error counted');
    });
  },
  async partial_success() {
    await withReceiver((request, index) => (index === 0 ? { status: 200, rejected: 3 } : { status: 200 }), async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=200', 'batch_size=50', 'encoding=json']);
      assert.deepStrictEqual(assertExactlyOnce('partial', receiver, 200), [], 'partial: records missing');
      assert.strictEqual(counters.rejected, 3, 'partial: rejected');
      assert.strictEqual(counters.dropped, 3, 'partial: dropped');
    });
  },
  async slow_answers() {
    await withReceiver(() => ({ status: 200, delayMs: 150 }), async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=2000', 'batch_size=100', 'timeout_ms=10000']);
      assert.deepStrictEqual(assertExactlyOnce('slow', receiver, 2000), [], 'slow: records missing');
      assert.strictEqual(counters.dropped, 0, 'slow: dropped');
      assert.strictEqual(counters.retries, 0, 'slow: a slow answer was taken for none');
    });
  },
  async never_answers() {
    await withReceiver((request, index) => (index < 2 ? { hang: true } : { status: 200 }), async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=100', 'timeout_ms=300']);
      assert.deepStrictEqual(assertExactlyOnce('silent', receiver, 100), [], 'silent: records missing');
      assert.strictEqual(counters.dropped, 0, 'silent: dropped');
      assert.ok(counters.retries >= 2, `silent: ${counters.retries} retries`);
    });
  },
  async block_when_full() {
    await withReceiver(() => ({ status: 200, delayMs: 20 }), async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=3000', 'batch_size=50', 'queue_bytes=16384', 'overflow=block']);
      assert.deepStrictEqual(assertExactlyOnce('block', receiver, 3000), [], 'block: records missing');
      assert.strictEqual(counters.dropped, 0, 'block: dropped');
    });
  },
  async shutdown_deadline() {
    await withReceiver(() => ({ hang: true }), async (receiver) => {
      const { counters } = await runClient(client, ['load', receiver.endpoint, 'count=100', 'timeout_ms=200', 'shutdown_ms=1000']);
      assert.strictEqual(receiver.accepted.length, 0, 'deadline: something was accepted');
      assert.strictEqual(counters.expired, 100, 'deadline: expired');
      assert.strictEqual(counters.dropped, 100, 'deadline: dropped');
    });
  },
};

async function restartUnderLoad(what, extra, nothingLost) {
  const count = 20000;
  const receiver = new Receiver();
  const port = await receiver.start();
  const run = runClient(client, ['load', receiver.endpoint, `count=${count}`, 'pause_every=100', 'pause_ms=10',
    'batch_size=200', 'padding=64', ...extra]);
  let clientDone = false;
  run.then(() => { clientDone = true; }, () => { clientDone = true; });
  let restarts = 0;
  for (; restarts < 10 && !clientDone; ++restarts) {
    await sleep(80);
    await receiver.stop();
    await sleep(80);
    await receiver.start(port);
  }
  const { counters } = await run;
  await receiver.stop();
  assert.strictEqual(restarts, 10, `${what}: the client ended after ${restarts} restarts`);
  const missing = assertExactlyOnce(what, receiver, count);
  assert.strictEqual(counters.records, count, `${what}: records handed to the sink`);
  assert.strictEqual(missing.length, counters.dropped, `${what}: ${missing.length} missing, ${counters.dropped} counted dropped`);
  assert.strictEqual(counters.dropped, counters.overflowed, `${what}: drops other than the queue's`);
  if (nothingLost) assert.strictEqual(counters.dropped, 0, `${what}: dropped within the bound`);
  console.log(`${what}: ${count} records, 10 restarts, ${counters.retries} retries, ${counters.dropped} dropped (counted), none twice`);
}

async function main() {
  const only = process.argv[3];
  for (const [name, scenario] of Object.entries(scenarios)) {
    if (only && name !== only) continue;
    await scenario();
    console.log(`${name}: ok`);
  }
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
