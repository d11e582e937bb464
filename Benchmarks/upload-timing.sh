# Sourced by send.sh and before-after.sh once `work` (the run's folder) is set: `timed_upload COMMAND [ARGS...]`
# prints the seconds COMMAND takes, to the millisecond, after `sync` (so that a server's write-back of the previous
# file does not fall on the next upload); the answer must carry the file's SHA-256, else the run stops.
timed_upload() {
  local start end
  sync
  start=$(date +%s%N)
  "$@" > "$work/answer" 2> "$work/errors" || { cat "$work/errors" >&2; exit 1; }
  end=$(date +%s%N)
  grep -q '"sha256"' "$work/answer" || { echo "no digest in the answer: $(cat "$work/answer")" >&2; exit 1; }
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }'
}
