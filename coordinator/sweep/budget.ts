// Pure: whether a stage fits the sweep's time budget, and how much drain it may have. A stage costs
// its length plus the start-up and shut-down around it (engine-sim and agents start, clocks are
// probed, the start is 2 s out, results are collected): before any stage ran we assume
// FIRST_OVERHEAD_S, afterwards the largest overhead seen so far.

/** Assumed start-up plus shut-down of a stage before one has been measured. */
export const FIRST_OVERHEAD_S = 10;

/** The decision for the next stage. */
export type BudgetCheck = { fits: true; drainCapS: number } | { fits: false; reason: string };

/**
 * `elapsedS`: since the sweep started; `overheadsS`: wall time minus stage length of each stage so
 * far; `budgetS`: null when the sweep has no budget (the drain cap is then the plan's own).
 */
export function checkBudget(
  stageS: number,
  elapsedS: number,
  overheadsS: readonly number[],
  budgetS: number | null,
  planDrainS: number,
): BudgetCheck {
  if (budgetS === null) return { fits: true, drainCapS: planDrainS };
  const overhead = overheadsS.length > 0 ? Math.max(...overheadsS) : FIRST_OVERHEAD_S;
  const left = budgetS - elapsedS;
  const slack = left - stageS - overhead;
  if (slack < 0)
    return {
      fits: false,
      reason: `the next stage needs about ${round1(stageS + overhead)} s (${stageS} s + ${round1(overhead)} s start-up and shut-down) but only ${round1(Math.max(0, left))} s of time_budget_s ${budgetS} s are left`,
    };
  return { fits: true, drainCapS: Math.min(planDrainS, Math.floor(slack * 10) / 10) };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
