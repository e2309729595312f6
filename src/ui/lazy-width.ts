// string-width, created on first need. Its module builds an Intl.Segmenter and Unicode-property
// regular expressions (\p{RGI_Emoji} alone takes longer than Node's own start) as it loads,
// before the first frame, whose text is usually printable ASCII and colour codes. The bundle
// (scripts/bundle.mjs) gives Ink and ghostwatch this wrapper around each string-width copy:
// without escape codes (stripped first, as string-width does, by the strip-ansi it uses)
// printable ASCII is one column a character, string-width's own first answer, and so is "…"
// (U+2026, East Asian Width "ambiguous": one column unless ambiguousIsNarrow is false), which
// shortened paths and ids put in many rows; anything else is measured by the real one.
type StringWidth = (value: string, options?: { readonly countAnsiEscapeCodes?: boolean; readonly ambiguousIsNarrow?: boolean }) => number;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const PRINTABLE_ASCII_OR_ELLIPSIS = /^[\x20-\x7e\u2026]*$/;

export function lazyStringWidth(load: () => StringWidth, stripAnsi: (text: string) => string): StringWidth {
  let real: StringWidth | undefined;
  return function stringWidth(value, options) {
    if (typeof value === 'string') {
      const text = options?.countAnsiEscapeCodes !== true && (value.includes('\u001b') || value.includes('\u009b')) ? stripAnsi(value) : value;
      if ((options?.ambiguousIsNarrow === false ? PRINTABLE_ASCII : PRINTABLE_ASCII_OR_ELLIPSIS).test(text)) return text.length;
    }
    real ??= load();
    return real(value, options);
  };
}
