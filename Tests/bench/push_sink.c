// push_sink: the push benchmark's provider. FCM (with its OAuth token endpoint) and APNs answering 200 at once,
// over TLS with ALPN h2, on one thread (epoll + OpenSSL + libnghttp2 from Debian), so that one HTTP/2 connection
// is bounded by the sender and not by the provider. Tests/fakes/push_fake.mjs stays the fake that checks
// requests; this one checks nothing.
//
// Build: cc -O2 -o push_sink push_sink.c -lnghttp2 -lssl -lcrypto   (Debian: libnghttp2-dev libssl-dev)
// Usage: push_sink [-t MAX_SECONDS] [-r] CERT KEY READY_FILE LOG_FILE
//   Listens on 127.0.0.1, ephemeral port; writes {"port":N} to READY_FILE (tmp + rename) once listening.
//   SETTINGS: MAX_CONCURRENT_STREAMS 100 (like FCM and APNs), INITIAL_WINDOW_SIZE 1 MiB.
//   Rapid-reset protection (CVE-2023-44487): nghttp2 servers since that fix (Debian's 1.52.0-1+deb12u1, the one
//   bundled with Node 20) end a connection with GOAWAY INTERNAL_ERROR after about 1000 RST_STREAM frames from
//   the client (a bucket of 1000, refilled at 33/s). libcurl 7.88 sends RST_STREAM(STREAM_CLOSED) after nearly
//   every finished stream, so such a server drops the sender's connection about every 1000 pushes. The sink
//   lifts that limit so one connection carries the whole run; -r keeps nghttp2's default (what a provider with
//   the same protection would do). Resets received are counted per connection either way.
//   Answers:  POST /token                      200 {"access_token":"ya29.sink","expires_in":3599,"token_type":"Bearer"}
//             POST /v1/projects/P/messages:send 200 {"name":"projects/P/messages/0:N"}
//             POST /3/device/TOKEN              200, apns-id (echoed, else made up), empty body
//             anything else                     404 {"error":"not found"}
//   On SIGTERM or SIGINT (or after MAX_SECONDS, default 900) it writes LOG_FILE and
//   exits 0. LOG_FILE: one line per request, "ROLE ARRIVAL_US LAT_US CONNECTION" (ROLE fcm, apns, oauth or other;
//   ARRIVAL_US: CLOCK_REALTIME in µs when the request's HEADERS frame began; LAT_US: the number after the first
//   "lat " in the first KiB of the body, 0 if none), then one line per connection,
//   "# connection ID requests N max_streams M refused R resets_received S (code C) goaway_received G
//   goaway_sent H end WHY" (refused: streams this side refused; G, H: the GOAWAY error codes, -1 for none;
//   WHY: tls-close, eof, tls-error, or open when still open or closed by this side).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { ROLE_OTHER, ROLE_OAUTH, ROLE_FCM, ROLE_APNS };
static const char *role_names[] = {"other", "oauth", "fcm", "apns"};

typedef struct {
  unsigned char role;
  uint32_t connection;
  int64_t at_us, lat_us;
} entry;

typedef struct stream {
  struct stream *prev, *next;
  int64_t at_us;
  char path[512];
  size_t path_len;
  char apns_id[64];
  size_t apns_id_len;
  char body[1024];
  size_t body_len;
  char resp[256];
  size_t resp_len, resp_off;
} stream;

typedef struct conn {
  int fd;
  SSL *ssl;
  nghttp2_session *h2;
  uint32_t id;
  unsigned char *out;
  size_t out_len, out_cap;
  int epollout;
  int open_streams, max_streams, refused;
  int goaway_error;  // -1: none received
  int resets;        // RST_STREAM frames received
  int reset_code;    // the last one's error code
  int goaway_sent;   // the error code of a GOAWAY this side sent, -1: none
  const char *end;   // why it closed
  uint64_t requests;
  stream *streams;
  struct conn *prev, *next;
} conn;

static volatile sig_atomic_t stopping;
static entry *entries;
static size_t entry_count, entry_cap;
static uint64_t fcm_counter;
static uint32_t connection_counter;
static conn *conns;
static int epfd;
static char summary[1 << 16];
static size_t summary_len;

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static int64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void die(const char *what) {
  fprintf(stderr, "push_sink: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void record(int role, int64_t at, int64_t lat, uint32_t connection) {
  if (entry_count == entry_cap) {
    entry_cap = entry_cap ? entry_cap * 2 : 65536;
    entries = realloc(entries, entry_cap * sizeof(entry));
    if (!entries) die("realloc");
  }
  entries[entry_count++] = (entry){(unsigned char)role, connection, at, lat};
}

// ----- output buffer: nghttp2 frames waiting for SSL_write ---------------------------------------------------
static void out_append(conn *c, const uint8_t *data, size_t len) {
  if (c->out_len + len > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 65536;
    while (cap < c->out_len + len) cap *= 2;
    c->out = realloc(c->out, cap);
    if (!c->out) die("realloc");
    c->out_cap = cap;
  }
  memcpy(c->out + c->out_len, data, len);
  c->out_len += len;
}

static void set_epollout(conn *c, int on) {
  if (c->epollout == on) return;
  struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
  epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
  c->epollout = on;
}

// Moves every frame nghttp2 has into the buffer and writes the buffer. Returns -1 when the connection is dead.
static int flush(conn *c) {
  if (c->h2) {
    for (;;) {
      const uint8_t *data;
      ssize_t n = nghttp2_session_mem_send(c->h2, &data);
      if (n < 0) return -1;
      if (n == 0) break;
      out_append(c, data, (size_t)n);
    }
  }
  size_t off = 0;
  while (off < c->out_len) {
    int n = SSL_write(c->ssl, c->out + off, (int)(c->out_len - off));
    if (n <= 0) {
      int e = SSL_get_error(c->ssl, n);
      if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) break;
      return -1;
    }
    off += (size_t)n;
  }
  memmove(c->out, c->out + off, c->out_len - off);
  c->out_len -= off;
  set_epollout(c, c->out_len > 0);
  return 0;
}

// ----- HTTP/2 callbacks -----------------------------------------------------------------------------------------
static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *source, void *user) {
  (void)s, (void)id, (void)user;
  stream *st = source->ptr;
  size_t n = st->resp_len - st->resp_off;
  if (n > len) n = len;
  memcpy(buf, st->resp + st->resp_off, n);
  st->resp_off += n;
  if (st->resp_off == st->resp_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static int begins(const char *s, size_t len, const char *prefix) {
  size_t p = strlen(prefix);
  return len >= p && memcmp(s, prefix, p) == 0;
}

static int64_t find_lat(const stream *st) {
  for (size_t i = 0; i + 4 < st->body_len; i++) {
    if (memcmp(st->body + i, "lat ", 4) != 0) continue;
    int64_t v = 0;
    size_t j = i + 4;
    while (j < st->body_len && st->body[j] >= '0' && st->body[j] <= '9') v = v * 10 + (st->body[j++] - '0');
    return v;
  }
  return 0;
}

#define HDR(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}

static int respond(nghttp2_session *s, conn *c, int32_t id, stream *st) {
  size_t path_len = st->path_len;
  for (size_t i = 0; i < st->path_len; i++)
    if (st->path[i] == '?') { path_len = i; break; }
  int role = ROLE_OTHER;
  const char *status = "404";
  char apns_id[64] = "";
  if (path_len == 6 && memcmp(st->path, "/token", 6) == 0) {
    role = ROLE_OAUTH;
    status = "200";
    st->resp_len = (size_t)snprintf(st->resp, sizeof st->resp,
                                    "{\"access_token\":\"ya29.sink\",\"expires_in\":3599,\"token_type\":\"Bearer\"}");
  } else if (begins(st->path, path_len, "/v1/projects/") && path_len > 27 &&
             memcmp(st->path + path_len - 14, "/messages:send", 14) == 0) {
    role = ROLE_FCM;
    status = "200";
    int project = (int)(path_len - 14 - 13);
    st->resp_len = (size_t)snprintf(st->resp, sizeof st->resp, "{\"name\":\"projects/%.*s/messages/0:%llu\"}",
                                    project, st->path + 13, (unsigned long long)++fcm_counter);
  } else if (begins(st->path, path_len, "/3/device/")) {
    role = ROLE_APNS;
    status = "200";
    st->resp_len = 0;
    if (st->apns_id_len > 0) {
      memcpy(apns_id, st->apns_id, st->apns_id_len);
      apns_id[st->apns_id_len] = 0;
    } else {
      snprintf(apns_id, sizeof apns_id, "00000000-0000-4000-8000-%012llX", (unsigned long long)c->requests);
    }
  } else {
    st->resp_len = (size_t)snprintf(st->resp, sizeof st->resp, "{\"error\":\"not found\"}");
  }
  c->requests++;
  record(role, st->at_us, role == ROLE_FCM ? find_lat(st) : 0, c->id);
  if (role == ROLE_APNS) {
    nghttp2_nv nva[] = {HDR(":status", status), HDR("apns-id", apns_id)};
    return nghttp2_submit_response(s, id, nva, 2, NULL);
  }
  nghttp2_nv nva[] = {HDR(":status", status), HDR("content-type", "application/json; charset=UTF-8")};
  nghttp2_data_provider body = {.source.ptr = st, .read_callback = read_body};
  return nghttp2_submit_response(s, id, nva, 2, &body);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  conn *c = user;
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  stream *st = calloc(1, sizeof *st);
  if (!st) die("calloc");
  st->at_us = now_us();
  st->next = c->streams;
  if (c->streams) c->streams->prev = st;
  c->streams = st;
  nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
  if (++c->open_streams > c->max_streams) c->max_streams = c->open_streams;
  return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
  (void)flags, (void)user;
  stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  if (!st) return 0;
  if (namelen == 5 && memcmp(name, ":path", 5) == 0 && valuelen < sizeof st->path) {
    memcpy(st->path, value, valuelen);
    st->path_len = valuelen;
  } else if (namelen == 7 && memcmp(name, "apns-id", 7) == 0 && valuelen < sizeof st->apns_id) {
    memcpy(st->apns_id, value, valuelen);
    st->apns_id_len = valuelen;
  }
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user) {
  (void)flags, (void)user;
  stream *st = nghttp2_session_get_stream_user_data(s, id);
  if (!st) return 0;
  size_t room = sizeof st->body - st->body_len;
  if (len > room) len = room;
  memcpy(st->body + st->body_len, data, len);
  st->body_len += len;
  return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  if (f->hd.type == NGHTTP2_GOAWAY) ((conn *)user)->goaway_error = (int)f->goaway.error_code;
  if (f->hd.type == NGHTTP2_RST_STREAM) {
    ((conn *)user)->resets++;
    ((conn *)user)->reset_code = (int)f->rst_stream.error_code;
  }
  if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st && respond(s, user, f->hd.stream_id, st) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  (void)s;
  conn *c = user;
  if (f->hd.type == NGHTTP2_RST_STREAM && f->rst_stream.error_code == NGHTTP2_REFUSED_STREAM) c->refused++;
  if (f->hd.type == NGHTTP2_GOAWAY) c->goaway_sent = (int)f->goaway.error_code;
  return 0;
}

static void unlink_stream(conn *c, stream *st) {
  if (st->prev) st->prev->next = st->next;
  else c->streams = st->next;
  if (st->next) st->next->prev = st->prev;
  free(st);
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error, void *user) {
  (void)error;
  conn *c = user;
  stream *st = nghttp2_session_get_stream_user_data(s, id);
  if (!st) return 0;
  nghttp2_session_set_stream_user_data(s, id, NULL);
  c->open_streams--;
  unlink_stream(c, st);
  return 0;
}

static nghttp2_session_callbacks *callbacks;
static nghttp2_option *options;

static int start_h2(conn *c) {
  if (nghttp2_session_server_new2(&c->h2, callbacks, c, options) != 0) return -1;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
  };
  if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 2) != 0) return -1;
  if (nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 1 << 24) != 0) return -1;
  return flush(c);
}

// ----- connections ----------------------------------------------------------------------------------------------
static void summarise(const conn *c) {
  if (summary_len >= sizeof summary - 1) return;
  summary_len += (size_t)snprintf(summary + summary_len, sizeof summary - summary_len,
                                  "# connection %u requests %llu max_streams %d refused %d resets_received %d (code %d) goaway_received %d "
                                  "goaway_sent %d end %s\n",
                                  c->id, (unsigned long long)c->requests, c->max_streams, c->refused, c->resets, c->reset_code,
                                  c->goaway_error, c->goaway_sent, c->end ? c->end : "open");
  if (summary_len >= sizeof summary) summary_len = sizeof summary - 1;
}

static void close_conn(conn *c) {
  summarise(c);
  if (c->prev) c->prev->next = c->next;
  else conns = c->next;
  if (c->next) c->next->prev = c->prev;
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  if (c->h2) nghttp2_session_del(c->h2);
  while (c->streams) unlink_stream(c, c->streams);
  SSL_free(c->ssl);
  close(c->fd);
  free(c->out);
  free(c);
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                       unsigned int inlen, void *arg) {
  (void)ssl, (void)arg;
  for (unsigned int i = 0; i + 1 <= inlen;) {
    unsigned int n = in[i];
    if (i + 1 + n > inlen) break;
    if (n == 2 && memcmp(in + i + 1, "h2", 2) == 0) {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + n;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

// Reads what TLS has, feeds nghttp2, writes the answers. Returns -1 when the connection should close.
static int service(conn *c) {
  if (!c->h2) {
    int r = SSL_accept(c->ssl);
    if (r <= 0) {
      int e = SSL_get_error(c->ssl, r);
      return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
    }
    const unsigned char *proto;
    unsigned int len;
    SSL_get0_alpn_selected(c->ssl, &proto, &len);
    if (len != 2 || memcmp(proto, "h2", 2) != 0) return -1;
    if (start_h2(c) != 0) return -1;
  }
  unsigned char buf[65536];
  for (;;) {
    int n = SSL_read(c->ssl, buf, sizeof buf);
    if (n <= 0) {
      int e = SSL_get_error(c->ssl, n);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
      c->end = e == SSL_ERROR_ZERO_RETURN ? "tls-close" : e == SSL_ERROR_SYSCALL ? "eof" : "tls-error";
      return -1;
    }
    if (nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0) return -1;
  }
  if (flush(c) != 0) return -1;
  if (!nghttp2_session_want_read(c->h2) && !nghttp2_session_want_write(c->h2) && c->out_len == 0) return -1;
  return 0;
}

static void write_file(const char *path, const char *text) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  fputs(text, f);
  if (fclose(f) != 0 || rename(tmp, path) != 0) die(path);
}

int main(int argc, char **argv) {
  unsigned max_seconds = 900;
  int reset_limit = 0;
  for (int opt; (opt = getopt(argc, argv, "t:r")) != -1;) {
    if (opt == 't') max_seconds = (unsigned)atoi(optarg);
    else if (opt == 'r') reset_limit = 1;
    else return 2;
  }
  if (argc - optind != 4) {
    fprintf(stderr, "usage: push_sink [-t MAX_SECONDS] [-r] CERT KEY READY_FILE LOG_FILE\n");
    return 2;
  }
  argv += optind;
  nghttp2_option_new(&options);
  if (!reset_limit) nghttp2_option_set_stream_reset_rate_limit(options, UINT64_MAX, UINT64_MAX);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  alarm(max_seconds);

  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, argv[0]) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, argv[1], SSL_FILETYPE_PEM) != 1) {
    ERR_print_errors_fp(stderr);
    return 1;
  }
  SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);

  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, on_frame_send);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 64) != 0) die("bind");
  socklen_t alen = sizeof addr;
  getsockname(lfd, (struct sockaddr *)&addr, &alen);
  char ready[64];
  snprintf(ready, sizeof ready, "{\"port\":%d}\n", ntohs(addr.sin_port));
  write_file(argv[2], ready);

  epfd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &lev);
  struct epoll_event events[64];
  while (!stopping) {
    int n = epoll_wait(epfd, events, 64, 1000);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      conn *c = events[i].data.ptr;
      if (!c) {
        int fd;
        while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conn *nc = calloc(1, sizeof *nc);
          if (!nc) die("calloc");
          nc->fd = fd;
          nc->goaway_error = -1;
          nc->goaway_sent = -1;
          nc->id = ++connection_counter;
          nc->ssl = SSL_new(ctx);
          nc->next = conns;
          if (conns) conns->prev = nc;
          conns = nc;
          SSL_set_fd(nc->ssl, fd);
          struct epoll_event ev = {.events = EPOLLIN, .data.ptr = nc};
          epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
        }
        continue;
      }
      if (service(c) != 0) close_conn(c);
    }
  }

  // Open connections are summarised too (without closing them: the client may still be there).
  for (conn *c = conns; c; c = c->next) summarise(c);
  FILE *f = fopen(argv[3], "w");
  if (!f) die(argv[3]);
  for (size_t i = 0; i < entry_count; i++)
    fprintf(f, "%s %lld %lld %u\n", role_names[entries[i].role], (long long)entries[i].at_us,
            (long long)entries[i].lat_us, entries[i].connection);
  fwrite(summary, 1, summary_len, f);
  if (fclose(f) != 0) die(argv[3]);
  return 0;
}
