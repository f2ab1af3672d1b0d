import { describe, expect, it } from 'vitest';
import { deliverStop, onStopSignal, runListening, STOP_SIGNALS, stopReason } from './stop-signals.js';

describe('stop signals', () => {
  it('both signals stop; each reason names its signal', () => {
    expect(STOP_SIGNALS).toEqual(['SIGTERM', 'SIGINT']);
    expect(stopReason('SIGINT')).toMatch(/^interrupted by the user \(SIGINT/);
    expect(stopReason('SIGTERM')).toMatch(/^stopped by SIGTERM/);
  });

  it('every listener hears a stop; a run is told apart; a listener that stopped listening hears nothing', () => {
    const heard: string[] = [];
    const offAround = onStopSignal((s) => heard.push(`around ${s}`));
    expect(runListening()).toBe(false);
    const offRun = onStopSignal((s) => heard.push(`run ${s}`), 'run');
    expect(runListening()).toBe(true);
    expect(deliverStop('SIGTERM')).toBe(2);
    expect(deliverStop('SIGINT', 'run')).toBe(1);
    offRun();
    expect(runListening()).toBe(false);
    expect(deliverStop('SIGINT')).toBe(1);
    offAround();
    expect(deliverStop('SIGINT')).toBe(0);
    expect(heard).toEqual(['around SIGTERM', 'run SIGTERM', 'run SIGINT', 'around SIGINT']);
  });
});
