// ANSI frame (as Ink writes it: text and SGR colour codes) to SVG. Only what Ink emits is
// understood: SGR 0/1/2/7/22/27/39/49, 16 colours and their bright variants.
import stringWidth from 'string-width';

const PALETTE: Record<number, string> = {
  30: '#1e1e1e', 31: '#e06c75', 32: '#98c379', 33: '#e5c07b', 34: '#61afef', 35: '#c678dd', 36: '#56b6c2', 37: '#d0d0d0',
  90: '#7f848e', 91: '#ff7b86', 92: '#b5e890', 93: '#ffd68a', 94: '#82c4ff', 95: '#e09cff', 96: '#7fd6e0', 97: '#ffffff',
};
const FG = '#d0d0d0';
const BG = '#1b1d23';
const CELL_W = 8.4;
const LINE_H = 18;

interface Style {
  fg?: string | undefined;
  bg?: string | undefined;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

function apply(style: Style, codes: number[]): Style {
  const s = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i]!;
    if (c === 0) Object.assign(s, { fg: undefined, bg: undefined, bold: false, dim: false, inverse: false });
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 22) (s.bold = false), (s.dim = false);
    else if (c === 7) s.inverse = true;
    else if (c === 27) s.inverse = false;
    else if (c === 39) s.fg = undefined;
    else if (c === 49) s.bg = undefined;
    else if (PALETTE[c]) s.fg = PALETTE[c];
    else if (PALETTE[c - 10]) s.bg = PALETTE[c - 10];
  }
  return s;
}

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function ansiToSvg(frame: string, columns: number, rows: number, title: string): string {
  const out: string[] = [];
  const width = Math.ceil(columns * CELL_W + 24);
  const height = rows * LINE_H + 24;
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect width="100%" height="100%" rx="6" fill="${BG}"/>`);
  out.push(`<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14" xml:space="preserve">`);
  frame.split('\n').forEach((line, row) => {
    let style: Style = { bold: false, dim: false, inverse: false };
    let col = 0;
    const y = 12 + row * LINE_H;
    for (const part of line.split(/(\u001b\[[0-9;]*m)/)) {
      const sgr = /^\u001b\[([0-9;]*)m$/.exec(part);
      if (sgr) {
        style = apply(style, (sgr[1] || '0').split(';').map(Number));
        continue;
      }
      if (part === '') continue;
      const w = stringWidth(part);
      let fg = style.fg ?? FG;
      let bg = style.bg;
      if (style.inverse) [fg, bg] = [bg ?? BG, fg];
      const x = 12 + col * CELL_W;
      if (bg) out.push(`<rect x="${x.toFixed(1)}" y="${y}" width="${(w * CELL_W).toFixed(1)}" height="${LINE_H}" fill="${bg}"/>`);
      if (part.trim() !== '') {
        const attrs = `${style.bold ? ' font-weight="bold"' : ''}${style.dim ? ' opacity="0.6"' : ''}`;
        out.push(`<text x="${x.toFixed(1)}" y="${y + 13}" fill="${fg}"${attrs}>${esc(part)}</text>`);
      }
      col += w;
    }
  });
  out.push('</g></svg>');
  return `${out.join('\n')}\n`;
}
