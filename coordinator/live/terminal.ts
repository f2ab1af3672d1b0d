// A block of lines kept at the bottom of a terminal and redrawn in place with ANSI cursor
// movement (no dependency): log lines printed meanwhile go above it, so nothing is overwritten.

/** Moves the cursor to the start of the line `n` lines up (CSI n F). */
const up = (n: number): string => (n > 0 ? `\x1b[${n}F` : '');
/** Erases the whole current line (CSI 2 K). */
const ERASE_LINE = '\x1b[2K';
/** Erases from the cursor to the end of the screen (CSI J), for a block that shrank. */
const ERASE_BELOW = '\x1b[J';

/**
 * The text that replaces the `previous` lines just above the cursor with `lines`, each cut to
 * `columns − 1` characters (a line that wrapped would throw the cursor arithmetic off), ending
 * with the cursor at the start of the line below the block.
 */
export function redrawFrame(previous: number, lines: readonly string[], columns: number): string {
  const width = Math.max(1, columns - 1);
  let out = up(previous);
  for (const l of lines) out += `${ERASE_LINE}${fitLine(l, width)}\n`;
  return out + ERASE_BELOW;
}

/** SGR escape sequences (colour): they take no column on screen. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

// A line cut to `width` visible characters. A line that must be cut loses its colour rather than
// risk cutting an escape sequence in half (which would colour everything after it).
function fitLine(line: string, width: number): string {
  const visible = line.replace(SGR, '');
  return visible.length <= width ? line : `${visible.slice(0, width - 1)}…`;
}

/** Where the block is drawn: a TTY stream (its size may change while the run goes). */
export interface TerminalOut {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
}

/** A block redrawn in place; `print` puts a line above it. */
export class StickyBlock {
  private shown = 0;
  private lines: string[] = [];

  constructor(private readonly out: TerminalOut) {}

  /** Redraws the block with `lines` (cut to the terminal's height so it never scrolls away). */
  update(lines: readonly string[]): void {
    const rows = this.out.rows || 24;
    this.lines = lines.slice(0, Math.max(1, rows - 1));
    this.out.write(redrawFrame(this.shown, this.lines, this.columns()));
    this.shown = this.lines.length;
  }

  /** Prints a line above the block, then the block again below it. */
  print(line: string): void {
    // The line is not cut (it may wrap): only the block's own lines are counted for the next redraw.
    this.out.write(`${up(this.shown)}${ERASE_BELOW}${line}\n${redrawFrame(0, this.lines, this.columns())}`);
  }

  // A pseudo-terminal without a size reports 0 columns: assume the classic 80 × 24 then.
  private columns(): number {
    return this.out.columns || 80;
  }

  /** Leaves the block on screen as it is; later output goes below it. */
  release(): void {
    this.shown = 0;
    this.lines = [];
  }
}
