// A small terminal screen for tests: the escape sequences Ink's standard renderer and the
// frame-diffing layer write (CUP, CUU, CHA, EL, ED, SGR, newline, text), applied to a grid of
// cells that each keep their character and the SGR state it was written in. Two byte streams that
// leave equal screens look the same in a terminal. Every character is one column here (tests
// use ASCII and '…'); a write past the last column is dropped, as a frame is cut to width.
export class ScreenModel {
  readonly cells: { ch: string; sgr: string }[][];
  row = 0;
  col = 0;
  /** Current attributes by kind (the codes tests use: 0, 1/22, 7/27, 30-37/39, 40-47/49). */
  sgr = new Map<string, string>();

  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    this.cells = Array.from({ length: rows }, () => this.blankRow());
  }

  private blankRow(): { ch: string; sgr: string }[] {
    return Array.from({ length: this.columns }, () => ({ ch: ' ', sgr: '' }));
  }

  private erase(row: number, from: number, to: number): void {
    // An erase fills with the current background (BCE): keep the state, as xterm and tmux do.
    const bg = this.sgr.get('bg') ?? '';
    for (let c = from; c < to; c++) this.cells[row]![c] = { ch: ' ', sgr: bg };
  }

  write(bytes: string): void {
    const re = /\u001b\[([\d;?]*)([A-Za-z])|\n|\r|[^\u001b\n\r]/gu;
    for (const m of bytes.matchAll(re)) {
      const token = m[0];
      if (m[2] !== undefined) this.csi(m[1]!, m[2]);
      else if (token === '\n') {
        // The tty turns a newline into CR LF (onlcr).
        this.row = Math.min(this.rows - 1, this.row + 1);
        this.col = 0;
      }
      else if (token === '\r') this.col = 0;
      else {
        if (this.col < this.columns) this.cells[this.row]![this.col] = { ch: token, sgr: [...this.sgr.entries()].sort().map(([, v]) => v).join(';') };
        this.col++;
      }
    }
  }

  private csi(params: string, final: string): void {
    const n = (i: number, fallback: number): number => Number(params.split(';')[i] || fallback);
    switch (final) {
      case 'H':
        this.row = Math.min(this.rows, n(0, 1)) - 1;
        this.col = Math.min(this.columns, n(1, 1)) - 1;
        break;
      case 'A':
        this.row = Math.max(0, this.row - n(0, 1));
        break;
      case 'G':
        this.col = n(0, 1) - 1;
        break;
      case 'K': {
        const mode = n(0, 0);
        if (mode === 2) this.erase(this.row, 0, this.columns);
        else if (mode === 0) this.erase(this.row, Math.min(this.col, this.columns), this.columns);
        break;
      }
      case 'J':
        this.erase(this.row, Math.min(this.col, this.columns), this.columns);
        for (let r = this.row + 1; r < this.rows; r++) this.erase(r, 0, this.columns);
        break;
      case 'm':
        for (const p of params === '' ? ['0'] : params.split(';')) {
          const code = Number(p);
          if (code === 0) this.sgr.clear();
          else if (code === 1) this.sgr.set('bold', p);
          else if (code === 22) this.sgr.delete('bold');
          else if (code === 7) this.sgr.set('inverse', p);
          else if (code === 27) this.sgr.delete('inverse');
          else if (code >= 30 && code <= 37) this.sgr.set('fg', p);
          else if (code === 39) this.sgr.delete('fg');
          else if (code >= 40 && code <= 47) this.sgr.set('bg', p);
          else if (code === 49) this.sgr.delete('bg');
        }
        break;
      default:
        break; // modes (?25l, ?2026h) change nothing on the grid
    }
  }

  /** Each row as text, with each cell's SGR state where it changes: what a user sees. */
  dump(): string[] {
    return this.cells.map((row) => {
      let out = '';
      let last = '';
      for (const cell of row) {
        if (cell.sgr !== last) out += `{${cell.sgr}}`;
        last = cell.sgr;
        out += cell.ch;
      }
      return out;
    });
  }
}
