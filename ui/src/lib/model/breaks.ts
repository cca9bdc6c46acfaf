/**
 * Where a long identifier (a DID, a URL, a key fingerprint, a hash) may
 * wrap: after its separators (`:` `/` `.` `-` `_` `#` `?` `&` `=` `@`), and
 * inside a run of more than 12 letters and digits every 8 characters, so a
 * hex digest or a key wraps in groups and a word stays whole. The text
 * itself is never changed.
 */
const SEPARATOR = /([:/.\-_#?&=@])/;

/** The pieces of `text` between which a line may break; joined, they are `text`. */
export function breakPieces(text: string): string[] {
  const pieces: string[] = [];
  for (const part of text.split(SEPARATOR)) {
    if (part === "") continue;
    if (SEPARATOR.test(part) && part.length === 1 && pieces.length > 0) {
      pieces[pieces.length - 1] += part;
      continue;
    }
    if (part.length <= 12) pieces.push(part);
    else for (let i = 0; i < part.length; i += 8) pieces.push(part.slice(i, i + 8));
  }
  return pieces;
}
