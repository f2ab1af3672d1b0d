import { describe, expect, it } from 'vitest';
import { latestServerSample, serverSource } from './server-sample.js';

const NAMES = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  saturation: ['llm_d_epp_flow_control_pool_saturation', 'inference_extension_flow_control_pool_saturation'],
};

const s = (name: string, value: number) => ({ name, value });

describe('latestServerSample', () => {
  it('is null until some source has a good scrape', () => {
    expect(latestServerSample([], NAMES)).toBeNull();
    expect(latestServerSample([{ records: [{ series: null }] }], NAMES)).toBeNull();
  });

  it("reads each source's latest good scrape: running and waiting summed, saturation the largest", () => {
    const vllmA = {
      records: [
        { series: [s('vllm:num_requests_running', 1), s('vllm:num_requests_waiting', 9)] },
        { series: [s('vllm:num_requests_running', 12), s('vllm:num_requests_waiting', 3)] },
        { series: null }, // a failed scrape does not hide the one before it
      ],
    };
    const vllmB = { records: [{ series: [s('vllm:num_requests_running', 5), s('vllm:num_requests_waiting', 0)] }] };
    const epp = {
      records: [
        {
          series: [s('inference_extension_flow_control_pool_saturation', 0.4), s('inference_extension_flow_control_pool_saturation', 0.82)],
        },
      ],
    };
    expect(latestServerSample([vllmA, vllmB, epp], NAMES)).toEqual({ running: 17, waiting: 3, saturation: 0.82 });
  });

  it('prefers the current name and leaves out what no source exposes', () => {
    const both = {
      records: [{ series: [s('llm_d_epp_flow_control_pool_saturation', 0.5), s('inference_extension_flow_control_pool_saturation', 0.9)] }],
    };
    expect(latestServerSample([both], NAMES)).toEqual({ running: null, waiting: null, saturation: 0.5 });
    const nan = { records: [{ series: [s('vllm:num_requests_running', Number.NaN)] }] };
    expect(latestServerSample([nan], NAMES)).toEqual({ running: null, waiting: null, saturation: null });
  });

  it('serverSource reads the results anew on every call', () => {
    const records: { series: { name: string; value: number }[] | null }[] = [];
    const source = serverSource(() => [{ records }], NAMES);
    expect(source.latestServer()).toBeNull();
    records.push({ series: [s('vllm:num_requests_running', 4)] });
    expect(source.latestServer()?.running).toBe(4);
  });
});
