// A userspace TCP proxy that delays each direction by its own amount (this kernel has no
// `tc netem`): asymmetric paths make the NTP-style estimate err by up to half the round trip,
// which is exactly what the reported uncertainty must cover.
// Usage: node tcp-delay-proxy.js LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT UP_DELAY_MS DOWN_DELAY_MS
import { createConnection, createServer, type Socket } from 'node:net';

const [listenPort, upstreamHost, upstreamPort, upMs, downMs] = process.argv.slice(2);

// Chunks keep their order: each is written at its arrival time plus the delay.
function delayedPipe(from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk) => setTimeout(() => to.write(chunk), delayMs));
  from.on('end', () => setTimeout(() => to.end(), delayMs));
  from.on('error', () => to.destroy());
}

createServer((client) => {
  client.setNoDelay(true);
  const upstream = createConnection({ host: upstreamHost!, port: Number(upstreamPort) });
  upstream.setNoDelay(true);
  delayedPipe(client, upstream, Number(upMs));
  delayedPipe(upstream, client, Number(downMs));
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
}).listen(Number(listenPort), '127.0.0.1', () => process.stdout.write('proxy listening\n'));
