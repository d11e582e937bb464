# Sourced by the benchmarks that compare with nginx: `nginx_put_conf WORK PORT [LISTEN [MORE]]` prints a
# configuration of nginx storing each PUT under /put/ by its WebDAV module (the body goes to a temp file in the same
# file system, then is renamed into place) and serving WORK/nginx-root at /, on 127.0.0.1:PORT, one worker a core,
# everything in WORK (nginx-temp/ and nginx-root/put/ must exist). LISTEN is added to `listen` ("ssl http2"), MORE
# to the server block (the certificate's lines). Debian's nginx 1.22 has the module built in. Its default body buffer
# (16 KiB) is kept: with 1 MiB it stored 1 GiB in 2.28 s against 1.60 s.
nginx_put_conf() {
  local work=$1 port=$2 listen=${3:-} more=${4:-}
  cat <<CONF
daemon off;
worker_processes auto;
user $(id -un);
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx-temp;
    proxy_temp_path $work/nginx-temp;
    fastcgi_temp_path $work/nginx-temp;
    uwsgi_temp_path $work/nginx-temp;
    scgi_temp_path $work/nginx-temp;
    server {
        listen 127.0.0.1:$port $listen;
        $more
        root $work/nginx-root;
        client_max_body_size 0;
        location /put/ { dav_methods PUT DELETE; create_full_put_path on; }
    }
}
CONF
}
