// suite: timing
// Images in chat prompts against the embedded engine-sim: real PNG bytes of the stated size go as
// image_url data URIs, engine-sim charges ceil(w/28)·ceil(h/28) prompt tokens per image, so at
// equal text the class with large images has a longer prefill and a higher TTFT.
import { describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { runPlanToEnd } from './harness.js';

const cls = (name: string, side: number, count: number, offsetS: number): TrafficClass => ({
  name,
  prompt: { input_tokens: 32, output_tokens: 4, images: { count, width: side, height: side } },
  load: { model: 'constant-rate', phases: [{ start_s: offsetS, duration_s: 3, rate_per_s: 3 }] },
});

describe('image inputs', () => {
  it('grow prefill: TTFT rises with image size at equal text', { timeout: 120_000 }, async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'images',
      seed: 2,
      duration_s: 3.2,
      drain_timeout_s: 10,
      classes: [cls('small', 64, 1, 0), cls('large', 1024, 2, 0.15)],
    };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    const of = (name: string) => rows.filter((r) => r.class === name);
    expect(of('small').every((r) => r.status === 'ok' && r.prompt_tokens === 32 + 3 * 3)).toBe(true);
    expect(of('large').every((r) => r.status === 'ok' && r.prompt_tokens === 32 + 2 * 37 * 37)).toBe(true);
    // Every request states its body size; the large images weigh far more (the same for every request of a class).
    const bytes = (name: string) => new Set(of(name).map((r) => r.request_bytes));
    expect(bytes('small').size).toBe(1);
    expect([...bytes('large')][0]).toBeGreaterThan(50 * [...bytes('small')][0]!);
    const small = run.classes.small.windows.all.ttft_p50_ms;
    const large = run.classes.large.windows.all.ttft_p50_ms;
    console.log(
      `images: TTFT p50 ${small} ms with one 64×64 image, ${large} ms with two 1024×1024 (${[...bytes('large')][0]} request bytes)`,
    );
    expect(large).toBeGreaterThan(small + 5);
    const checks = Object.fromEntries(run.data_quality.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
    expect(checks.request_shape).toBe('pass');
  });

  it('sends JPEG (format "jpeg") charged by size as PNG is, unique per request', async () => {
    const jpeg = cls('jpeg', 1024, 1, 0);
    jpeg.prompt.images!.format = 'jpeg';
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'jpeg',
      seed: 2,
      duration_s: 3.2,
      drain_timeout_s: 10,
      classes: [jpeg, cls('png', 1024, 1, 0.15)],
    };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    const of = (name: string) => rows.filter((r) => r.class === name);
    for (const name of ['jpeg', 'png']) {
      expect(of(name)).toHaveLength(9);
      expect(of(name).every((r) => r.status === 'ok' && r.prompt_tokens === 32 + 37 * 37)).toBe(true);
    }
    // Each request's JPEG has its own seeded blocks, so its size varies (a DC code per 8×8 block: tens of KB at 1024×1024).
    const jpegBytes = of('jpeg').map((r) => r.request_bytes);
    const pngBytes = of('png')[0].request_bytes;
    expect(new Set(jpegBytes).size).toBeGreaterThan(1);
    expect(Math.min(...jpegBytes)).toBeGreaterThan(((1024 / 8) * (1024 / 8) * 4) / 8); // at least 4 bits a block
    console.log(
      `images: one 1024×1024 image per request: JPEG ${Math.min(...jpegBytes)}–${Math.max(...jpegBytes)} request bytes, TTFT p50 ${run.classes.jpeg.windows.all.ttft_p50_ms} ms; PNG ${pngBytes} bytes, ${run.classes.png.windows.all.ttft_p50_ms} ms`,
    );
    expect(run.data_quality.checks.find((c: { name: string }) => c.name === 'request_shape').status).toBe('pass');
  });
});
