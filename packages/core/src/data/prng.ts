/** A small seeded pseudo-random generator (cyrb128 seed hash + sfc32) with the draws the synthetic dataset needs. */

/** A seeded stream of pseudo-random numbers; the same seed always yields the same sequence of draws. */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** Normal draw (Box–Muller). */
  normal(mean?: number, sd?: number): number;
  /** Log-normal draw with the given median (e^μ) and log-scale σ. */
  lognormal(median: number, sigma: number): number;
  /** Logit-normal draw in (0, 1) with the given median and logit-scale σ: a bounded, skewable "beta-ish" ratio. */
  logitNormal(median: number, sigma: number): number;
  /** Gamma(shape, 1) draw (Marsaglia–Tsang). */
  gamma(shape: number): number;
  /** Beta(α, β) draw, as the ratio of two gamma draws. */
  beta(alpha: number, beta: number): number;
}

/** cyrb128: hashes a string to four 32-bit words, used to seed sfc32 (not a cryptographic hash). */
export function hashSeed(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): a uniform [0, 1) source from four 32-bit words. */
export function sfc32(a: number, b: number, c: number, d: number): () => number {
  let s0 = a | 0;
  let s1 = b | 0;
  let s2 = c | 0;
  let counter = d | 0;
  const step = (): number => {
    const t = (((s0 + s1) | 0) + counter) | 0;
    counter = (counter + 1) | 0;
    s0 = s1 ^ (s1 >>> 9);
    s1 = (s2 + (s2 << 3)) | 0;
    s2 = (s2 << 21) | (s2 >>> 11);
    s2 = (s2 + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // The first outputs of a freshly seeded sfc32 are poorly mixed.
  for (let i = 0; i < 15; i++) step();
  return step;
}

/** A `Prng` seeded from a string (hashed with cyrb128); any text works, e.g. "seed|saas|smb|2026-Q3". */
export function createPrng(seed: string): Prng {
  const [a, b, c, d] = hashSeed(seed);
  const next = sfc32(a, b, c, d);
  let spare = Number.NaN;

  const normal = (mean = 0, sd = 1): number => {
    let z: number;
    if (!Number.isNaN(spare)) {
      z = spare;
      spare = Number.NaN;
    } else {
      // 1 − u keeps the logarithm's argument in (0, 1].
      const r = Math.sqrt(-2 * Math.log(1 - next()));
      const theta = 2 * Math.PI * next();
      z = r * Math.cos(theta);
      spare = r * Math.sin(theta);
    }
    return mean + sd * z;
  };

  const gamma = (shape: number): number => {
    if (shape < 1) return gamma(shape + 1) * Math.pow(1 - next(), 1 / shape);
    const dd = shape - 1 / 3;
    const cc = 1 / Math.sqrt(9 * dd);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = normal();
        v = 1 + cc * x;
      } while (v <= 0);
      v = v * v * v;
      const u = 1 - next();
      if (u < 1 - 0.0331 * x ** 4) return dd * v;
      if (Math.log(u) < 0.5 * x * x + dd * (1 - v + Math.log(v))) return dd * v;
    }
  };

  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    normal,
    lognormal: (median, sigma) => median * Math.exp(sigma * normal()),
    logitNormal: (median, sigma) => {
      const centre = Math.log(median / (1 - median));
      return 1 / (1 + Math.exp(-(centre + sigma * normal())));
    },
    gamma,
    beta: (alpha, beta) => {
      const x = gamma(alpha);
      return x / (x + gamma(beta));
    },
  };
}
