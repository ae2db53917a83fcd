/** A bounded set of recently seen ids (oldest forgotten first): cheap idempotency within a process. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.ids.size > this.max) {
      const oldest = this.ids.values().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
  }
}
