/** Line handling shared by chunking (ingestion) and citation sentences (answers). */

/**
 * A line break inside a paragraph (hard-wrapped Markdown, plain text, e-mail) becomes a space,
 * so that the segmenter, which ends a sentence at every line break, sees whole sentences. Blank
 * lines, and lines that start a list item, a heading, a quote or a table row, still break. The
 * length is unchanged, so offsets stay valid for the original text.
 */
export function unwrapLines(text: string): string {
  return text.replace(/(?<=[^\n])\n(?=[^\n])(?!\s*(?:[-*+#>|]|\d+[.)])\s)/g, ' ');
}
