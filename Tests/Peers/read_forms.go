// Reads a batch of multipart/form-data bodies with Go's mime/multipart and prints what it found in each.
//
//	go build -o read_forms read_forms.go && ./read_forms < cases.json
//
// Input and output as Tests/Peers/read_forms.py: a JSON array of {"content_type", "body" (base64)} in, one
// {"parts": [{"name", "filename", "size", "sha256"}]} or {"error"} per case out. Parts are read with
// Reader.NextRawPart (no quoted-printable decoding), as a server that streams them would.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"os"
)

type input struct {
	ContentType string `json:"content_type"`
	Body        []byte `json:"body"`
}

type part struct {
	Name     string  `json:"name"`
	Filename *string `json:"filename"`
	Size     int     `json:"size"`
	SHA256   string  `json:"sha256"`
}

type result struct {
	Parts []part `json:"parts,omitempty"`
	Error string `json:"error,omitempty"`
}

func read(c input) ([]part, error) {
	_, params, err := mime.ParseMediaType(c.ContentType)
	if err != nil {
		return nil, err
	}
	reader := multipart.NewReader(bytes.NewReader(c.Body), params["boundary"])
	parts := []part{}
	for {
		p, err := reader.NextRawPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		var filename *string
		if _, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil {
			if name, ok := params["filename"]; ok {
				filename = &name
			}
		}
		parts = append(parts, part{p.FormName(), filename, len(data), hex.EncodeToString(sum[:])})
	}
}

func main() {
	var cases []input
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	results := []result{}
	for _, c := range cases {
		parts, err := read(c)
		if err != nil {
			results = append(results, result{Error: err.Error()})
		} else {
			results = append(results, result{Parts: parts})
		}
	}
	json.NewEncoder(os.Stdout).Encode(results)
}
