// Reads a batch of multipart/form-data bodies with Node's undici (`new Response(body, {headers}).formData()`, the
// WHATWG reader that fetch uses) and prints what it found in each.
//
//   node read_forms.mjs < cases.json
//
// Input and output as Tests/Peers/read_forms.py: a JSON array of {"content_type", "body" (base64)} in, one
// {"parts": [{"name", "filename", "size", "sha256"}]} or {"error"} per case out. A field's size and hash are of
// its value as UTF-8, a file's of its bytes.
import { createHash } from "node:crypto";

async function read({ content_type, body }) {
  const form = await new Response(Buffer.from(body, "base64"), {
    headers: { "content-type": content_type },
  }).formData();
  const parts = [];
  for (const [name, value] of form.entries()) {
    const data = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(await value.arrayBuffer());
    parts.push({
      name,
      filename: typeof value === "string" ? null : value.name,
      size: data.length,
      sha256: createHash("sha256").update(data).digest("hex"),
    });
  }
  return parts;
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const results = [];
for (const c of JSON.parse(Buffer.concat(chunks).toString("utf8"))) {
  try {
    results.push({ parts: await read(c) });
  } catch (error) {
    results.push({ error: `${error.name}: ${error.message}` });
  }
}
process.stdout.write(JSON.stringify(results));
