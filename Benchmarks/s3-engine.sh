# Starts an S3 engine for the S3 benchmarks (sourced by s3.sh and s3-store.sh): `start_engine ENGINE FOLDER` runs
# moto, or Ceph's radosgw on a one-node cluster with a file-backed bluestore OSD, serving while a descriptor it
# keeps stays open; sets `endpoint`, exports the credentials and region, and adds its pid to `pids`.
# `stop_engine` closes that descriptor and waits for the engine to stop. Source it once `root` and `work` (the run's
# folder, removed on exit with every process in `pids`) are set.
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
start_engine() {
  local engine=$1 folder=$2
  local fifo="$folder/$engine.in"
  mkfifo "$fifo"
  if [ "$engine" = moto ]; then
    python3 "$root/Tests/Peers/s3_moto.py" < "$fifo" > "$folder/$engine.out" 2> /dev/null &
  else
    python3 "$root/Tests/Peers/radosgw.py" --bluestore 8 < "$fifo" > "$folder/$engine.out" 2> "$folder/$engine.err" &
  fi
  engine_pid=$!
  pids+=("$engine_pid")
  exec {engine_hold}> "$fifo"  # the engine serves while this stays open
  until [ -s "$folder/$engine.out" ]; do sleep 0.2; done
  if [ "$engine" = moto ]; then
    endpoint="http://127.0.0.1:$(head -n 1 "$folder/$engine.out")"
    export AWS_ACCESS_KEY_ID=moto AWS_SECRET_ACCESS_KEY=moto
  else
    read -r endpoint AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY < <(python3 -c \
      'import json,sys; c=json.load(sys.stdin); print(c["endpoint"], c["access"], c["secret"])' < "$folder/$engine.out")
    export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
  fi
  export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
}

stop_engine() {
  exec {engine_hold}>&-
  wait "$engine_pid" 2>/dev/null || true
}
