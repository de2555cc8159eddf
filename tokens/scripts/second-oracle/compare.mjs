// Reads the JSON lines "dump" writes and checks every count against npm's
// tiktoken (the WebAssembly build of OpenAI's Rust tiktoken), a second
// oracle next to tiktoken-go. Prints mismatches and npm tiktoken's speed.
import { createInterface } from "node:readline";
import { get_encoding } from "tiktoken";

const names = ["o200k_base", "cl100k_base"];
const encs = Object.fromEntries(names.map((n) => [n, get_encoding(n)]));
const spent = Object.fromEntries(names.map((n) => [n, 0n]));
let texts = 0, bytes = 0, mismatches = 0;

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line) continue;
  const rec = JSON.parse(line);
  texts++;
  bytes += Buffer.byteLength(rec.text, "utf8");
  for (const n of names) {
    const start = process.hrtime.bigint();
    const got = encs[n].encode_ordinary(rec.text).length;
    spent[n] += process.hrtime.bigint() - start;
    if (got !== rec[n]) {
      mismatches++;
      if (mismatches <= 10) {
        console.log(`${n}: compact ${rec[n]}, npm tiktoken ${got}: ${JSON.stringify(rec.text.slice(0, 120))}`);
      }
    }
  }
}
for (const n of names) {
  const secs = Number(spent[n]) / 1e9;
  console.log(`npm tiktoken ${n}: ${texts} texts, ${(bytes / 1e6).toFixed(1)} MB in ${secs.toFixed(2)}s: ${(bytes / 1e6 / secs).toFixed(1)} MB/s`);
  encs[n].free();
}
console.log(`${mismatches} mismatches`);
process.exit(mismatches === 0 ? 0 : 1);
