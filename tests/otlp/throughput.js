// SPDX-License-Identifier: MIT
// Records per second through the OTLP sink to a receiver on loopback that reads each request
// and answers 200 without decoding it (by hand, not in CTest; bench/README.md, "Sinks to real
// receivers"). Prints the records/s the logging calls handed over and the records/s delivered
// (until close() returned). Usage: node throughput.js <otlp_client> [count] [json]
'use strict';

const http = require('http');
const { runClient } = require('./receiver.js');

async function main() {
  const [client, countArg, encoding] = process.argv.slice(2);
  const count = Number(countArg || 500000);
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      ++requests;
      res.writeHead(200, { 'Content-Type': req.headers['content-type'] });
      res.end();
    });
  });
  server.keepAliveTimeout = 60000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${server.address().port}/v1/logs`;
  const args = ['load', endpoint, `count=${count}`, 'queue_bytes=268435456', 'batch_size=512', 'padding=48'];
  if (encoding === 'json') args.push('encoding=json');
  const { counters } = await runClient(client, args);
  server.close();
  const rate = (n, s) => Math.round(n / s).toLocaleString('en-US');
  console.log(`${encoding || 'protobuf'}: ${count} records, handed over ${rate(count, counters.log_seconds)}/s, ` +
    `delivered ${rate(counters.delivered, counters.total_seconds)}/s, ${requests} requests, ${counters.dropped} dropped`);
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
