// Writes the body that formBody (Sources/UploadServer/Web/resumable-form.js) builds to standard output, for the
// tests that hold it to StreamingMultipart's builder byte for byte.
//
//   node resumable_form_bytes.mjs BOUNDARY PART...
//
// A PART is name=value (a text field) or name=@path;filename=NAME;type=TYPE (a file, read whole; its filename and
// type as given, else the path's last component and none), as `multipart build --form-string` and `-F` take them.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { formBody } from "../Sources/UploadServer/Web/resumable-form.js";

const [boundary, ...parts] = process.argv.slice(2);
const entries = parts.map((part) => {
  const equals = part.indexOf("=");
  const name = part.slice(0, equals);
  const value = part.slice(equals + 1);
  if (!value.startsWith("@")) return [name, value];
  const [path, ...options] = value.slice(1).split(";");
  const option = (key) => options.find((o) => o.startsWith(key + "="))?.slice(key.length + 1);
  const file = new File([readFileSync(path)], option("filename") ?? basename(path), { type: option("type") ?? "" });
  return [name, file];
});
const { blob } = formBody(entries, boundary);
process.stdout.write(Buffer.from(await blob.arrayBuffer()));
