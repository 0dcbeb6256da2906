/** Metric values and names in sentences: ratios as percentages, multiples with an `x`, money as a plain number. */
import type { Metric } from "./catalog.ts";
import { METRIC_INFO } from "./catalog.ts";

/** A value as a sentence shows it: 0.4412 → "44.12%", 3.1 → "3.1x", 1234.5 → "1234.5". */
export function formatMetricValue(metric: Metric, value: number): string {
  const unit = METRIC_INFO[metric].unit;
  if (unit === "ratio") return `${Number((value * 100).toFixed(2))}%`;
  if (unit === "multiple") return `${Number(value.toFixed(2))}x`;
  return String(Number(value.toFixed(2)));
}

/** A word written in capitals (an acronym such as LTV, GMV): it keeps its case inside a sentence. */
const ACRONYM = /^[A-Z][A-Z0-9]+\b/;

/** "Churn rate" → "churn rate", "LTV to CAC ratio" → "LTV to CAC ratio": only a plain first word is lower-cased. */
function nounOf(label: string): string {
  return ACRONYM.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
}

// Letters whose spoken name starts with a vowel sound: "an LTV", "an SLA", but "a GMV", "a CAC".
const VOWEL_SOUND_LETTERS = new Set("AEFHILMNORSX");

/** The indefinite article that fits how `noun` is spoken: "an average…", "an LTV…", "a GMV…", "a churn…". */
export function indefiniteArticle(noun: string): "a" | "an" {
  if (ACRONYM.test(noun)) return VOWEL_SOUND_LETTERS.has(noun.charAt(0)) ? "an" : "a";
  return /^[aeiou]/i.test(noun) ? "an" : "a";
}

// Worked out once per metric: the percentile sentence asks on every request.
const NOUNS = Object.fromEntries(Object.values(METRIC_INFO).map((m) => [m.key, nounOf(m.label)])) as Record<Metric, string>;

/** The metric's label as it reads inside a sentence: "Churn rate" → "churn rate"; acronyms keep their case ("LTV to CAC ratio"). */
export function metricNoun(metric: Metric): string {
  return NOUNS[metric];
}

/** The metric's noun with the article that fits it: "a churn rate", "an average order value", "an LTV to CAC ratio". */
export function metricNounWithArticle(metric: Metric): string {
  const noun = NOUNS[metric];
  return `${indefiniteArticle(noun)} ${noun}`;
}
