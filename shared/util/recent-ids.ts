/**
 * A bounded set of recently seen ids (oldest forgotten first): cheap idempotency within a process.
 * The last `max` ids added. The ids' order is kept in a ring of its own, not read from the Set: the
 * oldest entry of a Set that has had many deletes sits behind their holes, so `values().next()`
 * walks them on every add once full, at a cost that rises with the holes until V8 rebuilds the
 * table (bench/eviction.mjs measures an add once full against a plain Set's add and delete).
 */
export class RecentIds {
  private readonly ids = new Set<string>();
  /** The ids in the order they were added; once `max` long, slot `next` holds the oldest. */
  private readonly order: string[] = [];
  private next = 0;

  constructor(private readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new RangeError(`max must be a positive integer, got ${String(max)}`);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.order.length < this.max) {
      this.order.push(id);
      return;
    }
    const oldest = this.order[this.next];
    if (oldest !== undefined) this.ids.delete(oldest);
    this.order[this.next] = id;
    this.next = (this.next + 1) % this.max;
  }
}
