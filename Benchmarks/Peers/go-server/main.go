// goserver DIR [sha256|none [CERT KEY]]: the Go standard library's upload server, the peer of the example server in
// Benchmarks/server-vs-nginx.sh. POST /upload streams each file part of a multipart/form-data body
// (Request.MultipartReader, no ParseMultipartForm buffering) into a new file in DIR, hashing it with SHA-256 as it
// goes when asked, and removes the file after answering; GET / answers a short page. Prints
// "listening on 127.0.0.1:PORT" once it listens. With CERT and KEY it serves HTTPS, HTTP/2 by ALPN as net/http does.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goserver DIR [sha256|none [CERT KEY]]")
		os.Exit(2)
	}
	dir := os.Args[1]
	digest := len(os.Args) > 2 && os.Args[2] == "sha256"
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upload server\n") })
	http.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		reader, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := ""
		for {
			part, err := reader.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if part.FileName() == "" {
				io.Copy(io.Discard, part)
				continue
			}
			file, err := os.CreateTemp(dir, "go-upload-")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer os.Remove(file.Name())
			var sum hash.Hash
			var sink io.Writer = file
			if digest {
				sum = sha256.New()
				sink = io.MultiWriter(file, sum)
			}
			n, err := io.Copy(sink, part)
			file.Close()
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			answer += fmt.Sprintf("%s %d", part.FormName(), n)
			if sum != nil {
				answer += " " + hex.EncodeToString(sum.Sum(nil))
			}
			answer += "\n"
		}
		io.WriteString(w, answer)
	})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	os.Stdout.Sync()
	if len(os.Args) > 4 { // CERT KEY: HTTPS, with HTTP/2 by ALPN (net/http's own)
		http.ServeTLS(listener, nil, os.Args[3], os.Args[4])
		return
	}
	http.Serve(listener, nil)
}
