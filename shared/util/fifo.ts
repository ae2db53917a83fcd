/**
 * A first-in, first-out list on an array: taken items are passed by an index and the passed part is
 * dropped now and then (once it is at least 1,024 slots and half the array, or the whole array),
 * not shifted out per item. Each item has a slot, its number since the list began, by which it can
 * be emptied in place (`empty`); an emptied slot stays in the list, and is passed by `shift` (which
 * then gives undefined) or by `skipEmpty`.
 *
 * For the queues of hot paths (the UDP listener's waiting datagrams, the journal's in-memory tail,
 * the idempotency store's order of records). Items are never undefined: that is an emptied slot.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  /** Slots dropped from the front of `items` so far: `items[i]` is slot `base + i`. */
  private base = 0;

  /** Slots in the list, emptied ones included. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds an item at the end; its slot. */
  push(item: T): number {
    this.items.push(item);
    return this.base + this.items.length - 1;
  }

  /** The first slot's item (undefined when the list is empty or that slot was emptied). */
  peek(): T | undefined {
    return this.items[this.head];
  }

  /** Takes the first slot: its item, or undefined when the list is empty or that slot was emptied. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    this.drop();
    return item;
  }

  /** Empties `slot` if it still holds `item`; false when it does not (taken already, or emptied). */
  empty(slot: number, item: T): boolean {
    const at = slot - this.base;
    if (at < this.head || at >= this.items.length || this.items[at] !== item) return false;
    this.items[at] = undefined;
    return true;
  }

  /** Passes the emptied slots at the front. */
  skipEmpty(): void {
    while (this.head < this.items.length && this.items[this.head] === undefined) this.head += 1;
    this.drop();
  }

  private drop(): void {
    if (this.head === this.items.length) {
      this.base += this.head;
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.base += this.head;
      this.head = 0;
    }
  }
}
