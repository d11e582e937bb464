/// The page at `GET /`: the form that both routes take. A browser submits it as `multipart/form-data`.
let formPage = """
    <!doctype html>
    <html lang="en">
    <head><meta charset="utf-8"><title>VaporUpload</title></head>
    <body>
    <h1>Upload</h1>
    <form id="upload" action="/upload" method="post" enctype="multipart/form-data">
      <label>Caption <input id="caption" name="caption" type="text"></label>
      <label>Photos <input id="photos" name="photos[]" type="file" multiple></label>
      <button type="submit">Upload</button>
    </form>
    </body>
    </html>
    """
