/**
 * The line protocol of one tsdb write, built into one buffer (the writer's request bodies are slices
 * of it). See `LineBuffer`.
 */
import type { LineChunk } from './client.js';
import { type LineSink, type Point, writeLine } from './line-protocol.js';

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

  /** Bytes of lines it holds (since `reset`). */
  get size(): number {
    return this.length;
  }

  /** Bytes it holds room for (the buffer grows, never shrinks). */
  get capacity(): number {
    return this.buffer.length;
  }

  /** Empties it for the next write's lines, keeping its buffer (the chunks of earlier lines are then overwritten). */
  reset(): void {
    this.length = 0;
    this.small = '';
  }

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
   * encodes to. The text is encoded natively into the buffer one text length further on, then its
   * bytes are moved back in one pass, a `\` put before each `"` and `\` (the gap is never
   * overtaken: there are at most as many escapes as UTF-16 units). Escaping the UTF-8 bytes is
   * escaping the text: these two bytes occur in UTF-8 only as those characters (every byte of a
   * multi-byte sequence is ≥ 0x80), and a lone surrogate is encoded as U+FFFD either way. Half the
   * CPU of `quoted` and encoding its result (`JSON.stringify` of 2 KB of JSON text is slow), and no
   * escaped copy of the text to collect.
   */
  putString(text: string): void {
    this.put('"');
    this.flush();
    // The gap, then at most 3 bytes per UTF-16 unit.
    this.reserve(text.length * 4);
    const buffer = this.buffer;
    const encoded = this.length + text.length;
    const end = encoded + buffer.write(text, encoded, 'utf8');
    let to = this.length;
    for (let from = encoded; from < end; from++) {
      const b = buffer[from] ?? 0;
      if (b === QUOTE || b === BACKSLASH) buffer[to++] = BACKSLASH;
      buffer[to++] = b;
    }
    this.length = to;
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
    return { body };
  }

  /** The text of one line (for a log of the point the tsdb refused). */
  text(span: LineSpan): string {
    return this.buffer.toString('utf8', span.start, span.end);
  }
}
