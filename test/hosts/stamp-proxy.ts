// A TCP proxy in front of the target that stamps, on its own (true) clock, when each request
// reaches it: an observer outside the agent, to check an agent's send times against the global
// schedule whatever the agent's clock does. Prints `stamp <request_index> <unix_ns>` per request
// (read from the x-request-id header the agent sends).
// Usage: node stamp-proxy.js LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT
import { createConnection, createServer } from 'node:net';
import { anchoredClock } from '../../shared/clock.js';

const [listenPort, upstreamHost, upstreamPort] = process.argv.slice(2);
const clock = anchoredClock();
const ID = /x-request-id: lf-\S+-(\d+)\r\n/gi;

createServer((client) => {
  client.setNoDelay(true);
  const upstream = createConnection({ host: upstreamHost!, port: Number(upstreamPort) });
  upstream.setNoDelay(true);
  client.on('data', (chunk: Buffer) => {
    const at = clock.nowNs();
    for (const m of chunk.toString('latin1').matchAll(ID)) process.stdout.write(`stamp ${m[1]} ${at}\n`);
    upstream.write(chunk);
  });
  upstream.on('data', (chunk: Buffer) => client.write(chunk));
  client.on('end', () => upstream.end());
  upstream.on('end', () => client.end());
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
}).listen(Number(listenPort), '0.0.0.0', () => process.stdout.write('proxy listening\n'));
