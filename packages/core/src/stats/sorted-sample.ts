/** A sample sorted ascending: a `Float64Array` (how cells store it) or a plain array of numbers. */
export type SortedSample = Float64Array | readonly number[];
