/**
 * The bridge's stand-ins (Request, Response, Headers) answer their hot members themselves and hand every other
 * member of the native class to the real object they build on first need. This defines those hand-offs.
 */

/**
 * Defines on `proto`, for each of `keys` of the native prototype `native` not in `skip`, a method or accessor
 * that runs the native one on `real(this)`.
 */
export function delegateToReal<Self>(
  proto: object,
  native: object,
  keys: readonly PropertyKey[],
  skip: ReadonlySet<PropertyKey>,
  real: (self: Self) => object,
): void {
  for (const key of keys) {
    if (skip.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(native, key);
    if (descriptor === undefined) continue;
    if (typeof descriptor.value === "function") {
      const method = descriptor.value as (...args: unknown[]) => unknown;
      Object.defineProperty(proto, key, {
        configurable: true,
        writable: true,
        value: function (this: Self, ...args: unknown[]): unknown {
          return method.apply(real(this), args);
        },
      });
    } else if (descriptor.get !== undefined || descriptor.set !== undefined) {
      const { get, set } = descriptor;
      Object.defineProperty(proto, key, {
        configurable: true,
        get:
          get &&
          function (this: Self): unknown {
            return get.call(real(this));
          },
        set:
          set &&
          function (this: Self, value: unknown): void {
            set.call(real(this), value);
          },
      });
    }
  }
}
