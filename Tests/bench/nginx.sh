# Sourced by Tests/bench/run and Tests/bench/registrations: nginx with the project's local config in front of a
# responder socket. Needs WORK (a temporary directory), BIN_DIR (the release binaries) and ROOT (the checkout).

# free_port: a TCP port on loopback nobody listens on right now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for URL: poll (bounded) until the URL answers.
wait_for() { for _ in $(seq 1 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "timeout: $1" >&2; return 1; }
# serve NAME: nginx on a free port in front of $WORK/NAME/fcgi.sock; prints the port.
serve() {
  local dir="$WORK/$1" port
  mkdir -p "$dir"
  port=$(free_port)
  free_port >"$dir/metrics-port"
  "$BIN_DIR/aprs-cloud" nginx-config --http "127.0.0.1:$port" --metrics "127.0.0.1:$(cat "$dir/metrics-port")" \
    --data "$dir" --socket "$dir/fcgi.sock" --nginx-dir "$ROOT/nginx" >"$dir/nginx.conf"
  nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" </dev/null >/dev/null 2>&1 &
  echo "$!" >"$dir/nginx.bench-pid"
  echo "$port"
}
