/**
 * The `buckets + 1` equal-width edges numpy.histogram uses for a sample spanning [min, max]: a zero
 * width range widens to [min − 0.5, max + 0.5], an empty sample uses [0, 1], and the edges are built
 * as numpy.linspace builds them (start + i·step, last edge set to the stop exactly).
 */
export function histogramEdges(min: number, max: number, buckets: number): number[] {
  let start = min;
  let stop = max;
  if (start === stop) {
    start -= 0.5;
    stop += 0.5;
  }
  const delta = stop - start;
  const step = delta / buckets;
  const edges = new Array<number>(buckets + 1);
  if (step === 0) {
    // linspace's fallback when the step underflows: scale the fraction, then the span.
    for (let i = 0; i < buckets; i++) edges[i] = (i / buckets) * delta + start;
  } else {
    for (let i = 0; i < buckets; i++) edges[i] = i * step + start;
  }
  edges[buckets] = stop;
  return edges;
}
