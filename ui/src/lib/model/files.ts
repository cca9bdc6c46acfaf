/**
 * Reading a file the person chose in an `<input type=file>`: the webview
 * reads it (no filesystem plugin) and its bytes go to the engine exactly as
 * read, as the contract's `number[]`.
 */

/** The largest receipt the engine reads (1 MiB), and the largest session log (16 MiB). */
export const MAX_RECEIPT_BYTES = 1 << 20;
export const MAX_LOG_BYTES = 16 << 20;

/** Something that can be read as bytes (a File, or a Blob in tests). */
export interface Readable {
  readonly name: string;
  readonly size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** The file's bytes as a plain array, or a sentence naming the file when it is too large to send. */
export async function readBytes(file: Readable, limit: number, what: string): Promise<number[]> {
  if (file.size > limit) {
    throw new Error(`The ${what} ${file.name} is ${file.size} bytes, more than the ${limit} the console reads.`);
  }
  return Array.from(new Uint8Array(await file.arrayBuffer()));
}
