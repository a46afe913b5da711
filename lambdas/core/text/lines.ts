/** Line handling shared by chunking (ingestion) and citation sentences (answers). */

/**
 * A line break inside a paragraph (hard-wrapped Markdown, plain text, e-mail) becomes a space,
 * so that the segmenter, which ends a sentence at every line break, sees whole sentences. Blank
 * lines, lines that start a list item, a heading, a quote or a table row, and the line after a
 * table row (one that ends with `|`), still break. The length is unchanged, so offsets stay valid
 * for the original text.
 */
export function unwrapLines(text: string): string {
  // The marker is looked for on the next line only: a lookahead running across lines would
  // rescan every following whitespace-only line from each break. The lookbehinds come after the
  // break, so that they run at breaks only and read back over the blanks before that one.
  return text.replace(
    /\n(?<=[^\n]\n)(?<!\|[^\S\n]*\n)(?=[^\n])(?![^\S\n]*(?:[-*+#>|]|\d+[.)])\s)/g,
    ' ',
  );
}

/** Whether a line is a table row as the parsers write one: `| cell | cell |`. */
export function isTableRow(line: string): boolean {
  const row = line.trim();
  return row.length > 1 && row.startsWith('|') && row.endsWith('|');
}
