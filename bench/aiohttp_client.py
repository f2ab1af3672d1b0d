"""A minimal aiohttp streaming client, the way Python LLM benchmarks read SSE (line by line,
a perf_counter stamp per data line, no JSON parsing): a closed loop of N streams for D seconds.
Prints one JSON line with its CPU time over the load window (time.process_time).

Usage: python3 aiohttp_client.py --url BASE --concurrency N --tokens T --duration-s D --gap-ms G --first-ms F
"""

import argparse
import asyncio
import json
import time

import aiohttp


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--duration-s", type=float, required=True)
    p.add_argument("--gap-ms", type=float, required=True)
    p.add_argument("--first-ms", type=float, required=True)
    return p.parse_args()


async def one_stream(session, url, body, headers, counts):
    """One request: read lines as they arrive and stamp each data line."""
    async with session.post(url, data=body, headers=headers) as resp:
        first = None
        last = None
        async for line in resp.content:
            line = line.strip()
            if not line or not line.startswith(b"data:"):
                continue
            now = time.perf_counter()
            if first is None:
                first = now
            last = now
            counts["chunks"] += 1
            counts["bytes"] += len(line)
        counts["responses"] += 1
        return first, last


async def worker(session, url, body, headers, deadline, counts):
    while time.perf_counter() < deadline:
        try:
            await one_stream(session, url, body, headers, counts)
        except aiohttp.ClientError:
            counts["errors"] += 1


async def main():
    a = parse_args()
    url = a.url.rstrip("/") + "/chat/completions"
    body = json.dumps({
        "model": "paced",
        "max_tokens": a.tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
        "messages": [{"role": "user", "content": " ".join(["the"] * 16)}],
    })
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "x-paced-gap-ms": str(a.gap_ms),
        "x-paced-first-ms": str(a.first_ms),
    }
    counts = {"responses": 0, "chunks": 0, "bytes": 0, "errors": 0}
    # limit=0: no connection cap (aiohttp's default of 100 would hide the offered concurrency).
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        deadline = t0 + a.duration_s
        await asyncio.gather(*(worker(session, url, body, headers, deadline, counts) for _ in range(a.concurrency)))
        cpu_ms = (time.process_time() - cpu0) * 1000
        wall_ms = (time.perf_counter() - t0) * 1000
    print(json.dumps({
        "cpu_ms": cpu_ms,
        "wall_ms": wall_ms,
        "responses": counts["responses"],
        "chunks_seen": counts["chunks"],
        "bytes": counts["bytes"],
        "errors": counts["errors"],
    }), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
