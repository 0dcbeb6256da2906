/** A Map that drops its oldest entry rather than grow past `capacity` (the stores' remembered rows). */
export class BoundedMap<V> extends Map<string, V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: string, value: V): this {
    if (this.size >= this.capacity && !this.has(key)) this.delete(this.keys().next().value as string);
    return super.set(key, value);
  }
}
