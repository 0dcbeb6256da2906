/** A merchant's 0–100 score: the mean of its direction-adjusted ranks, with its components and a letter grade. */
import type { Metric } from "../data/catalog.ts";
import { roundTo1 } from "../stats/round-to1.ts";
import type { MetricComparison } from "./compare-metric.ts";

/** A letter grade: A from 80, B from 60, C from 40, D from 20, F below. */
export type Grade = "A" | "B" | "C" | "D" | "F";

/** One metric's part of the score. */
export interface ScoreComponent {
  readonly metric: Metric;
  /** The direction-adjusted rank: the share of peers the value is better than, 0–100. */
  readonly rank: number;
  /** The metric's weight; the weights sum to 1. */
  readonly weight: number;
  /** `weight × rank`; the contributions sum to the score before rounding. */
  readonly contribution: number;
}

/** The score, its grade and its components. */
export interface MerchantScore {
  /** 0–100, one decimal. */
  readonly score: number;
  readonly grade: Grade;
  readonly components: readonly ScoreComponent[];
}

/** The grade of a (rounded) score. */
export function gradeOf(score: number): Grade {
  return score >= 80 ? "A" : score >= 60 ? "B" : score >= 40 ? "C" : score >= 20 ? "D" : "F";
}

/**
 * score = Σ wᵢ · rᵢ with equal weights wᵢ = 1/n over the n ranked metrics, where rᵢ is the metric's
 * direction-adjusted rank (`betterThanPct`): the mean standing, rounded to one decimal. Null without metrics.
 */
export function merchantScore(comparisons: readonly MetricComparison[]): MerchantScore | null {
  const n = comparisons.length;
  if (n === 0) return null;
  const weight = 1 / n;
  let sum = 0;
  const components = comparisons.map((c): ScoreComponent => {
    sum += c.betterThanPct;
    return { metric: c.metric, rank: c.betterThanPct, weight, contribution: c.betterThanPct * weight };
  });
  // The mean as sum / n (one rounding) rather than the sum of the contributions (n roundings).
  const score = roundTo1(sum / n);
  return { score, grade: gradeOf(score), components };
}
