/** Cell values on disk: the sorted sample as consecutive IEEE-754 float64, little-endian (8 bytes a value). */

const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

/** Encodes numbers as float64 little-endian bytes. */
export function encodeFloat64(values: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(values.length * 8);
  if (LITTLE_ENDIAN) {
    out.set(new Uint8Array(Float64Array.from(values).buffer));
    return out;
  }
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat64(i * 8, values[i]!, true);
  return out;
}

/** Decodes float64 little-endian bytes into a fresh (aligned, owned) Float64Array. */
export function decodeFloat64(bytes: Uint8Array): Float64Array {
  if (bytes.byteLength % 8 !== 0) throw new Error(`corrupt float64 blob of ${bytes.byteLength} bytes`);
  const n = bytes.byteLength / 8;
  const out = new Float64Array(n);
  if (LITTLE_ENDIAN) {
    // Drivers hand out views into shared, unaligned buffers: copy the bytes rather than aliasing them.
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/** Encodes a cell's business ordinals as uint32 little-endian bytes (4 bytes each). */
export function encodeUint32(values: Uint32Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setUint32(i * 4, values[i]!, true);
  return out;
}

/** Decodes uint32 little-endian bytes into a fresh Uint32Array. */
export function decodeUint32(bytes: Uint8Array): Uint32Array {
  if (bytes.byteLength % 4 !== 0) throw new Error(`corrupt uint32 blob of ${bytes.byteLength} bytes`);
  const n = bytes.byteLength / 4;
  const out = new Uint32Array(n);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}
