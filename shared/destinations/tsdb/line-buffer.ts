/**
 * The line protocol of one tsdb write, built into one buffer (the writer's request bodies are slices
 * of it). See `LineBuffer`.
 */
import type { LineChunk } from './client.js';
import { writeLine, type LineSink, type Point } from './line-protocol.js';

/** Pieces shorter than this are gathered into one string before they are written (fewer native calls). */
const SMALL_PIECE = 256;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Where a line is in a `LineBuffer`: `start` to `end` (exclusive, without the newline). */
export interface LineSpan {
  start: number;
  end: number;
}

/**
 * Each point's line is written here piece by piece (`writeLine`) as the points come, followed by
 * `\n`. A chunk of consecutive lines is a slice of it (no join, no second encoding for the request),
 * and no line is ever made as a string: a 2 KB audit line cost four copies of its text (fields
 * joined, line concatenated, flattened, encoded), and strings alive across young-generation
 * collections are copied and promoted, which was a fifth of the queue → tsdb bench's time.
 */
export class LineBuffer implements LineSink {
  private buffer = Buffer.allocUnsafeSlow(64 * 1024);
  private length = 0;
  private small = '';

  /** Appends the line of `point` and a newline; returns where the line starts and ends. Throws LineProtocolError, having appended nothing. */
  add(point: Point): LineSpan {
    const start = this.length;
    try {
      writeLine(point, this);
    } catch (err) {
      this.small = '';
      this.length = start;
      throw err;
    }
    this.put('\n');
    this.flush();
    return { start, end: this.length - 1 };
  }

  /** `LineSink`: a piece of the line as it is. */
  put(piece: string): void {
    if (piece.length < SMALL_PIECE) {
      this.small += piece;
      if (this.small.length < SMALL_PIECE) return;
      piece = this.small;
      this.small = '';
    } else this.flush();
    this.write(piece);
  }

  /**
   * `LineSink`: a string field, in `"` with `"` and `\` escaped, byte for byte what `quoted(text)`
   * encodes to. The text is encoded into the buffer natively, then its `"` and `\` bytes are
   * escaped there, moving the bytes after each one (from the end, once). Escaping the UTF-8 bytes
   * is escaping the text: these two bytes occur in UTF-8 only as those characters (every byte of a
   * multi-byte sequence is ≥ 0x80), and a lone surrogate is encoded as U+FFFD either way. Saves
   * the escaped copy of the text (`quoted` made one, and `JSON.stringify` of JSON text is slow).
   */
  putString(text: string): void {
    this.put('"');
    this.flush();
    // At most 3 bytes per UTF-16 unit, escapes included (an escaped character is 1 byte, 2 escaped).
    this.reserve(text.length * 3);
    const buffer = this.buffer;
    const from = this.length;
    const to = from + buffer.write(text, from, 'utf8');
    let escapes = 0;
    for (let i = from; i < to; i++) {
      const b = buffer[i];
      if (b === QUOTE || b === BACKSLASH) escapes++;
    }
    this.length = to + escapes;
    for (let src = to - 1, dst = to - 1 + escapes; escapes > 0; src--) {
      const b = buffer[src] ?? 0;
      buffer[dst--] = b;
      if (b === QUOTE || b === BACKSLASH) {
        buffer[dst--] = BACKSLASH;
        escapes--;
      }
    }
    this.put('"');
  }

  private flush(): void {
    if (this.small === '') return;
    const text = this.small;
    this.small = '';
    this.write(text);
  }

  /** Room for `bytes` more bytes. */
  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  private write(text: string): void {
    // At most 3 bytes per UTF-16 unit.
    this.reserve(text.length * 3);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  /** The request of consecutive lines, first to last (a slice of the buffer, no copy). */
  chunk(spans: readonly LineSpan[]): LineChunk {
    const buffer = this.buffer;
    const first = spans[0];
    const last = spans[spans.length - 1];
    const body = first === undefined || last === undefined ? Buffer.alloc(0) : buffer.subarray(first.start, last.end);
    return { body, lines: () => spans.map((s) => buffer.toString('utf8', s.start, s.end)) };
  }

  /** The text of one line (for a log of the point the tsdb refused). */
  text(span: LineSpan): string {
    return this.buffer.toString('utf8', span.start, span.end);
  }
}
