// Applying a WorkspaceEdit's text edits, as an editor does. Used by the end-to-end test.

import * as P from 'vscode-languageserver-protocol/node';

/** Apply LSP text edits (UTF-16 positions, as negotiated) to a text, the way an editor does. */
export function applyTextEdits(text: string, edits: readonly P.TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\n') {
      lineStarts.push(i + 1);
    }
  }
  const offset = (p: P.Position): number => {
    if (p.line >= lineStarts.length) {
      return text.length;
    }
    const start = lineStarts[p.line];
    const end = p.line + 1 < lineStarts.length ? lineStarts[p.line + 1] - 1 : text.length;
    return Math.min(start + p.character, end);
  };
  const sorted = edits
    .map((e) => ({ start: offset(e.range.start), end: offset(e.range.end), text: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const e of sorted) {
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
  }
  return out;
}
