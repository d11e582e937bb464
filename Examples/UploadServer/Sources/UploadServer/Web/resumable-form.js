// resumable-form.js: a browser's form upload that survives a dropped connection, with no dependency. It speaks
// draft-ietf-httpbis-resumable-upload as draft 09 has it (interop version 8), which the example server speaks.
//
//   import { formBody, ResumableUpload } from "/resumable-form.js";
//   const upload = new ResumableUpload("/upload", formBody([["caption", "Sunset"], ["photos[]", file]]));
//   const answer = await upload.start((sent, total) => bar.value = sent / total);  // { status, text }
//
// The body is built as one Blob with the same boundary and escaping rules as StreamingMultipart's builder and
// browsers (a name's or filename's `"`, CR and LF become %22, %0D and %0A; nothing else is escaped), so that
// `blob.slice(offset)` is the rest of the body. The upload is created empty with `Upload-Complete: ?0` (a
// browser never sees a `104`: the location comes in the `201`), then the whole body goes in one `PATCH`. When its
// connection drops, `HEAD` asks how far the server got and a `PATCH` sends the rest from there, up to
// `maxResumptions` times; a server that no longer knows the upload (a 404 to either) gets the body again from its
// start, once.
// `pause()` stops sending and `start()` goes on from the server's offset.

const INTEROP_VERSION = "8";
const BOUNDARY_CHARACTERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A boundary as the builder makes one: "StreamingMultipart-" and 31 random letters and digits. */
export function makeBoundary() {
  const random = crypto.getRandomValues(new Uint8Array(31));
  return "StreamingMultipart-" + Array.from(random, (byte) => BOUNDARY_CHARACTERS[byte % 62]).join("");
}

/** A field name or filename escaped as browsers and the builder send it inside quotes (WHATWG's encoding). */
export function escapeQuoted(text) {
  return text
    .replaceAll('"', "%22")
    .replaceAll("\r", "%0D")
    .replaceAll("\n", "%0A");
}

/**
 * The multipart/form-data body of `entries` ([name, value] pairs, in order; a value is a string or a Blob/File,
 * whose `name` is its filename, "blob" when it has none, and whose `type` its Content-Type,
 * application/octet-stream when empty). Text goes as UTF-8, as it is (no line endings changed).
 * Returns { blob, contentType, boundary }.
 */
export function formBody(entries, boundary = makeBoundary()) {
  const pieces = [];
  entries.forEach(([name, value], index) => {
    let head = `${index === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"`;
    if (value instanceof Blob) {
      const filename = typeof value.name === "string" ? value.name : "blob";
      head += `; filename="${escapeQuoted(filename)}"\r\nContent-Type: ${value.type || "application/octet-stream"}`;
    }
    pieces.push(head + "\r\n\r\n", value);
  });
  pieces.push(`${entries.length === 0 ? "" : "\r\n"}--${boundary}--\r\n`);
  return { blob: new Blob(pieces), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

/** One request by XMLHttpRequest (a browser's only upload with progress): resolves { status, headers, text },
 * rejects with "network" (the connection dropped) or "abort" (paused). */
function send(method, url, headers, body, onProgress, track) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(method, url);
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    if (onProgress) request.upload.onprogress = (event) => onProgress(event.loaded);
    request.onload = () =>
      resolve({
        status: request.status,
        header: (name) => request.getResponseHeader(name),
        text: request.responseText,
      });
    request.onerror = () => reject(new Error("network"));
    request.onabort = () => reject(new Error("abort"));
    track(request);
    request.send(body ?? null);
  });
}

/** A form's resumable upload to `url`: `start(onProgress)` resolves with the server's answer to the form. */
export class ResumableUpload {
  constructor(url, body, { maxResumptions = 20 } = {}) {
    this.url = url;
    this.body = body;
    this.maxResumptions = maxResumptions;
    this.resource = null; // the upload's location, once created
    this.resumptions = 0; // how many times the rest went again after a drop
    this.conflicts = 0; // appends answered 409 (a browser re-sends a cut request from its old offset by itself)
    this.started = false;
    this.startedOver = false; // whether the body went again from its start once (the server forgot the upload)
    this.paused = false;
    this.current = null; // the request under way
  }

  /** Stops sending; `start()` goes on from where the server got to. */
  pause() {
    this.paused = true;
    this.current?.abort();
  }

  /** Creates the upload (once), then sends the rest of the body until the server answers the form, resuming
   * after a dropped connection. `onProgress(offset, total)` as the bytes go. Resolves { status, header, text }. */
  async start(onProgress = () => {}) {
    this.paused = false;
    const total = this.body.blob.size;
    const track = (request) => (this.current = request);
    const version = { "Upload-Draft-Interop-Version": INTEROP_VERSION };
    if (!this.resource) {
      const fields = { ...version, "Content-Type": this.body.contentType, "Upload-Complete": "?0" };
      const created = await send("POST", this.url, { ...fields, "Upload-Length": String(total) }, null, null, track);
      if (created.status !== 201 || !created.header("Location")) return created; // refused: the server's answer
      this.resource = new URL(created.header("Location"), new URL(this.url, globalThis.location?.href)).href;
    }
    let ask = this.started; // a start after a pause asks where the server got to
    this.started = true;
    for (let attempt = 0; ; attempt++) {
      let offset = 0;
      if (ask) {
        const asked = await send("HEAD", this.resource, version, null, null, track);
        if (asked.status === 404) return this.startOver(onProgress);
        offset = Number(asked.header("Upload-Offset") ?? "0");
      }
      ask = true;
      const fields = {
        ...version,
        "Upload-Offset": String(offset),
        "Upload-Complete": "?1",
        "Content-Type": "application/partial-upload",
      };
      try {
        const progress = (loaded) => onProgress(Math.min(total, offset + loaded), total);
        const answer = await send("PATCH", this.resource, fields, this.body.blob.slice(offset), progress, track);
        if (answer.status === 409) {
          this.conflicts += 1; // a stale offset: ask again
          continue;
        }
        if (answer.status === 404) return this.startOver(onProgress);
        return answer;
      } catch (error) {
        if (this.paused) throw new Error("paused");
        if (attempt >= this.maxResumptions) throw error;
        this.resumptions += 1;
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  /** The server no longer knows the upload (it restarted, its window passed, or, behind a load balancer, the
   * server that held it is gone): the body again from its start, in a new upload, once. */
  startOver(onProgress) {
    if (this.startedOver) throw new Error("the server no longer knows the upload");
    this.startedOver = true;
    this.resource = null;
    this.started = false;
    return this.start(onProgress);
  }
}
