// Property: a frame decodes to a message of a known type with its required fields typed, or is
// refused as LF_BAD_FRAME, whatever msgpack value it holds, and whatever is cut from or changed in
// a valid frame; never another exception, never a message of a type the protocol does not have.
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { LoadfleetError } from './errors.js';
import { decodeMessage, encodeMessage, PROTOCOL_VERSION } from './protocol.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

const TYPES = [
  'hello',
  'probe_reply',
  'prepared',
  'armed',
  'started',
  'heartbeat',
  'records',
  'interval',
  'final',
  'failed',
  'welcome',
  'joined',
  'probe',
  'plan',
  'arm',
  'slew',
  'ack',
  'resume',
  'stop',
  'abort',
  'release',
];

function decodeOrRefuse(frame: Uint8Array): { type: string } | 'refused' {
  try {
    return decodeMessage(frame);
  } catch (err) {
    expect(err).toBeInstanceOf(LoadfleetError);
    expect((err as LoadfleetError).code).toBe('LF_BAD_FRAME');
    return 'refused';
  }
}

// Message-like values: a type (known, inherited from every object, or any string) and fields of any kind.
const frameValue = fc.oneof(
  fc.anything(),
  fc.record({
    type: fc.oneof(
      fc.constantFrom(...TYPES),
      fc.constantFrom('constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'),
      fc.string(),
    ),
    rseq: fc.oneof(fc.nat(), fc.anything()),
    seq: fc.oneof(fc.nat(), fc.anything()),
    reason: fc.oneof(fc.string(), fc.anything()),
  }),
);

describe('protocol frames (property)', () => {
  it(
    'any msgpack value or cut or changed frame: a known, typed message or LF_BAD_FRAME',
    () => {
      const valid = encodeMessage({
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        agent_id: 'a1',
        host: 'h',
        pid: 1,
        clock_domain_id: 'd',
        clock_domain_declared: false,
      });
      fc.assert(
        fc.property(
          fc.oneof(
            frameValue.map((v) => Uint8Array.from(pack(v))),
            fc.tuple(fc.nat(valid.length), fc.nat(valid.length - 1), fc.nat(255)).map(([cut, at, byte]) => {
              const b = Uint8Array.from(valid);
              b[at] = byte;
              return b.subarray(0, cut);
            }),
          ),
          (frame) => {
            const m = decodeOrRefuse(frame);
            if (m !== 'refused') expect(TYPES).toContain(m.type);
          },
        ),
        { numRuns: 2000 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
