// suite: timing
// The mixed-fault soak (test/soak/round.ts): link cuts and blackholes, an agent SIGKILLed and
// restarted with its spool, the coordinator SIGKILLed at a seeded moment (mid-load, in the drain
// before every final is in, right after the last final was acknowledged, or while the run directory
// is written) and restarted with `coordinator resume`, and a slow, erroring target, all in one run. In the regular suite one
// 20 s round; `npm run soak` runs rounds for LOADFLEET_MIXED_SOAK_S (default 180 s) and prints the
// figures. LOADFLEET_MIXED_SOAK_SEED replays a soak (round n uses seed + n).
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { COORDINATOR_KILLS, type RoundResult, soakRound } from './soak/round.js';

const TOTAL_S = Number(process.env.LOADFLEET_MIXED_SOAK_S ?? 20);
const SEED = Number(process.env.LOADFLEET_MIXED_SOAK_SEED ?? 11);
/** Load of one round: a round of the long soak is longer, so its link faults spread. */
const ROUND_LOAD_S = TOTAL_S > 60 ? 40 : TOTAL_S;
const LINK_FAULTS = TOTAL_S > 60 ? 2 : 1;

describe('mixed-fault soak', () => {
  it(
    `${TOTAL_S} s of load in ${ROUND_LOAD_S} s rounds: link faults, an agent killed and restarted and the coordinator killed and resumed per round, a slow erroring target; every request at most once, nothing spooled or planned on a live agent lost, the run recovered`,
    async () => {
      const rounds: RoundResult[] = [];
      const began = Date.now();
      for (let n = 0; rounds.reduce((s, r) => s + r.loadS, 0) < TOTAL_S; n++) {
        // The suite's single round kills its coordinator in the drain (the moment no other test takes); the soak's rounds draw theirs.
        const r = await soakRound(SEED + n, ROUND_LOAD_S, LINK_FAULTS, TOTAL_S > 60 ? undefined : 'drain');
        console.log(`soak round ${n + 1}: ${JSON.stringify(r)}`);
        rounds.push(r);
        // Judged round by round, so a failure names its seed.
        expect(r.coordinatorKilled, `seed ${r.seed}: the coordinator was killed (${r.coordinatorKill})`).toBe(true);
        expect(r.resumedCode, `seed ${r.seed}: coordinator resume exits 0`).toBe(0);
        expect(r.coordinatorCode, `seed ${r.seed}`).toBe(0);
        expect(r.spooledAtCoordinatorKillLost, `seed ${r.seed}: spooled requests when the coordinator was killed not in the run`).toBe(0);
        expect(r.recovered, `seed ${r.seed}: run.json recovered`).not.toBeNull();
        expect(r.statusReason).toContain('was recovered from its journal');
        // Killed before the agents had handed over, they held on and came back: the outage is theirs too.
        if (r.coordinatorKill === 'mid-load' || r.coordinatorKill === 'drain')
          expect(r.coordinatorOutages, `seed ${r.seed}: agents' outages for the coordinator`).toBeGreaterThan(0);
        // Standing agents, stopped with SIGTERM once the run was written, exit as interrupted.
        for (const c of r.agentCodes) expect(c, `seed ${r.seed}`).toBe(ExitCode.INTERRUPTED);
        // A moment named by the finals comes in the load's last second or after (each agent's last
        // planned request goes out in its last 0.3 s, and its final when that one is answered).
        if (r.coordinatorKill !== 'mid-load') expect(r.recovered!.down_from_s, `seed ${r.seed}`).toBeGreaterThanOrEqual(r.loadS - 1);
        else expect(r.recovered!.during_load, `seed ${r.seed}`).toBe(true);
        expect(r.duplicates, `seed ${r.seed}: request indices in requests.ndjson twice`).toBe(0);
        expect(r.spooledLost, `seed ${r.seed}: spooled requests of the killed agent not in the run`).toBe(0);
        expect(r.survivorsMissing, `seed ${r.seed}: planned requests of agents not killed missing`).toBe(0);
        expect(r.unexplainedMissing, `seed ${r.seed}`).toBe(0);
        expect(r.spooledAtKill, `seed ${r.seed}: the kill came after the load began`).toBeGreaterThan(0);
        // A fault drawn for a moment after the round ended (its link gone) is not injected; most are.
        expect(r.linkFaults.length, `seed ${r.seed}: link faults injected`).toBeGreaterThanOrEqual(LINK_FAULTS);
        expect(r.status).toBe('degraded');
        expect(r.statusReason).toContain(`agent ${r.killed} was lost`);
      }
      const sum = (f: (r: RoundResult) => number): number => rounds.reduce((s, r) => s + f(r), 0);
      console.log(
        `soak figures: ${JSON.stringify({
          wall_s: Math.round((Date.now() - began) / 1000),
          rounds: rounds.length,
          load_s: sum((r) => r.loadS),
          link_faults: sum((r) => r.linkFaults.length),
          link_closes: sum((r) => r.linkFaults.filter((l) => /chaos close/.test(l)).length),
          link_blackholes: sum((r) => r.linkFaults.filter((l) => /chaos (up|down)/.test(l)).length),
          agent_kills: rounds.length,
          coordinator_kills: Object.fromEntries(
            COORDINATOR_KILLS.map((m) => [m, rounds.filter((r) => r.coordinatorKill === m && r.coordinatorKilled).length]),
          ),
          spooled_at_coordinator_kill: sum((r) => r.spooledAtCoordinatorKill),
          target_errors: sum((r) => r.targetErrors),
          planned: sum((r) => r.planned),
          requests: sum((r) => r.rows),
          not_sent_by_killed_agents: sum((r) => r.planned - r.rows),
          spooled_at_kill: sum((r) => r.spooledAtKill),
          duplicates_dropped: sum((r) => r.duplicatesDropped),
          interval_duplicates_dropped: sum((r) => r.intervalDuplicates),
          duplicates_in_requests: sum((r) => r.duplicates),
          lost: sum((r) => r.spooledLost + r.spooledAtCoordinatorKillLost + r.survivorsMissing + r.unexplainedMissing),
        })}`,
      );
    },
    (Math.ceil(TOTAL_S / ROUND_LOAD_S) * (ROUND_LOAD_S + 90) + 30) * 1000,
  );
});
