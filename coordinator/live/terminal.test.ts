import { describe, expect, it } from 'vitest';
import { redrawFrame, StickyBlock } from './terminal.js';

// A minimal terminal: enough of VT100 to replay what StickyBlock writes (text, \n, CSI n F,
// CSI 2 K, CSI J) and show the screen that results, so the tests check what a user would see.
class FakeTerminal {
  screen: string[] = [''];
  row = 0;
  col = 0;
  constructor(
    readonly columns: number,
    readonly rows = 24,
  ) {}

  write(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\x1b') {
        const m = /^\[(\d*)([A-Za-z])/.exec(text.slice(i + 1));
        if (!m) throw new Error(`unknown escape at ${JSON.stringify(text.slice(i, i + 8))}`);
        this.csi(m[1] === '' ? 1 : Number(m[1]), m[2]!);
        i += m[0].length;
      } else if (ch === '\n') {
        this.row++;
        this.col = 0;
        while (this.screen.length <= this.row) this.screen.push('');
      } else {
        const line = this.screen[this.row]!.padEnd(this.col);
        this.screen[this.row] = line.slice(0, this.col) + ch + line.slice(this.col + 1);
        this.col++;
      }
    }
  }

  private csi(n: number, op: string): void {
    if (op === 'F') {
      this.row = Math.max(0, this.row - n);
      this.col = 0;
    } else if (op === 'K' && n === 2) this.screen[this.row] = '';
    else if (op === 'J') {
      this.screen[this.row] = this.screen[this.row]!.slice(0, this.col);
      this.screen.length = this.row + 1;
    } else throw new Error(`unsupported CSI ${n}${op}`);
  }

  /** The screen without the empty line the cursor waits on. */
  visible(): string[] {
    return this.screen.filter((l, i) => !(i === this.screen.length - 1 && l === ''));
  }
}

describe('redrawFrame', () => {
  it('moves up over the old block, erases each line it writes, and clears what is left below', () => {
    expect(redrawFrame(0, ['a', 'b'], 80)).toBe('\x1b[2Ka\n\x1b[2Kb\n\x1b[J');
    expect(redrawFrame(3, ['a'], 80)).toBe('\x1b[3F\x1b[2Ka\n\x1b[J');
  });

  it('cuts lines to the width so none wraps', () => {
    expect(redrawFrame(0, ['abcdefghij'], 6)).toBe('\x1b[2Kabcd…\n\x1b[J');
  });
});

describe('StickyBlock', () => {
  it('redraws in place, keeps log lines above the block, and leaves nothing behind when it shrinks', () => {
    const term = new FakeTerminal(40);
    term.write('before\n');
    const block = new StickyBlock(term);
    block.update(['t 1 s', 'rt sent 10', 'batch sent 4']);
    expect(term.visible()).toEqual(['before', 't 1 s', 'rt sent 10', 'batch sent 4']);
    block.update(['t 2 s', 'rt sent 20', 'batch sent 9']);
    expect(term.visible()).toEqual(['before', 't 2 s', 'rt sent 20', 'batch sent 9']);
    block.print('[coordinator] agent agent-2 was lost');
    expect(term.visible()).toEqual(['before', '[coordinator] agent agent-2 was lost', 't 2 s', 'rt sent 20', 'batch sent 9']);
    block.update(['t 3 s', 'rt sent 30']);
    expect(term.visible()).toEqual(['before', '[coordinator] agent agent-2 was lost', 't 3 s', 'rt sent 30']);
    block.release();
    term.write('summary\n');
    expect(term.visible()).toEqual(['before', '[coordinator] agent agent-2 was lost', 't 3 s', 'rt sent 30', 'summary']);
  });

  it('keeps the block within the terminal height and width', () => {
    const term = new FakeTerminal(10, 3);
    const block = new StickyBlock(term);
    block.update(['0123456789abc', 'two', 'three', 'four']);
    expect(term.visible()).toEqual(['01234567…', 'two']);
    block.update(['x', 'y']);
    expect(term.visible()).toEqual(['x', 'y']);
  });

  it('assumes 80 × 24 when a pseudo-terminal reports no size', () => {
    const term = new FakeTerminal(0, 0);
    const block = new StickyBlock(term);
    block.update(['a'.repeat(100), 'b']);
    expect(term.visible()).toEqual([`${'a'.repeat(78)}…`, 'b']);
  });
});

describe('coloured lines', () => {
  it('counts only visible characters, and drops the colour of a line it must cut', () => {
    const red = '\x1b[31mabcd\x1b[0m';
    expect(redrawFrame(0, [red], 6)).toBe(`\x1b[2K${red}\n\x1b[J`);
    expect(redrawFrame(0, ['\x1b[31mabcdefghij\x1b[0m'], 6)).toBe('\x1b[2Kabcd…\n\x1b[J');
  });
});
