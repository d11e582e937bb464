/// The page at `GET /`: a text field and a multiple file input that post to `/upload`, and the answer shown as a
/// table (and the raw JSON) without leaving the page. Without JavaScript the form posts as usual and the browser
/// shows the JSON.
enum FormPage {
    /// The pages' style (`GET /upload.css`), this one's and the resumable upload page's (`Web/resumable.html`).
    static let css = """
        body { font: 16px system-ui, sans-serif; margin: 2em; max-width: 60em; }
        label { display: block; margin: 0.5em 0; }
        table { border-collapse: collapse; margin: 1em 0; }
        th, td { border: 1px solid #999; padding: 0.3em 0.6em; text-align: left; font-family: monospace;
                 overflow-wrap: anywhere; }
        .error { color: #a00; font-weight: bold; }
        pre { background: #f4f4f4; padding: 1em; white-space: pre-wrap; word-break: break-all; }
        """

    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>UploadServer</title>
        <link rel="stylesheet" href="/upload.css">
        </head>
        <body>
        <h1>Upload</h1>
        <form id="upload" action="/upload" method="post" enctype="multipart/form-data">
          <label>Caption <input id="caption" name="caption" type="text"></label>
          <label>Files <input id="files" name="files" type="file" multiple></label>
          <button id="send" type="submit">Upload</button>
        </form>
        <div id="result"></div>
        <script>
        const form = document.getElementById("upload");
        const result = document.getElementById("result");
        function cell(row, text) { row.insertCell().textContent = text; }
        function show(status, answer) {
          result.replaceChildren();
          const heading = document.createElement("h2");
          heading.id = "status";
          heading.textContent = status === 200 ? "Uploaded" : "Refused (" + status + ")";
          result.append(heading);
          if (answer.error) {
            const message = document.createElement("p");
            message.className = "error";
            message.textContent = answer.error.code + ": " + answer.error.message;
            result.append(message);
          } else {
            const files = document.createElement("table");
            files.id = "files-table";
            const head = files.createTHead().insertRow();
            for (const title of ["field", "filename", "type", "bytes", "SHA-256"]) cell(head, title);
            for (const file of answer.files) {
              const row = files.insertRow();
              for (const value of [file.field, file.filename, file.contentType ?? "", file.size, file.sha256 ?? ""]) cell(row, value);
            }
            const fields = document.createElement("table");
            fields.id = "fields-table";
            const fieldHead = fields.createTHead().insertRow();
            for (const title of ["field", "value"]) cell(fieldHead, title);
            for (const field of answer.fields) {
              const row = fields.insertRow();
              cell(row, field.name);
              cell(row, field.value);
            }
            result.append(files, fields);
          }
          const raw = document.createElement("pre");
          raw.id = "json";
          raw.textContent = JSON.stringify(answer, null, 2);
          result.append(raw);
        }
        form.addEventListener("submit", async (event) => {
          event.preventDefault();
          const response = await fetch("/upload", { method: "POST", body: new FormData(form) });
          show(response.status, await response.json());
        });
        </script>
        </body>
        </html>
        """
}
