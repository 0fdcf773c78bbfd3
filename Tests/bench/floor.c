/* The floor any FastCGI responder pays: a minimal libfcgi program with N worker threads that
 * answers every request with a fixed JSON body. The responder benchmark runs it behind the same
 * nginx configuration as aprs-cloud-fcgi.   usage: floor SOCKET WORKERS */
#include <fcgiapp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int listen_fd;
static const char reply[] =
    "Status: 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
    "Content-Length: 36\r\n\r\n{\"messages\":[],\"serverTime\":0,\"x\":0}";

static void *worker(void *unused) {
  (void)unused;
  FCGX_Request request;
  FCGX_InitRequest(&request, listen_fd, 0);
  char body[65536];
  while (FCGX_Accept_r(&request) == 0) {
    FCGX_GetStr(body, sizeof body, request.in);
    FCGX_PutStr(reply, sizeof reply - 1, request.out);
    FCGX_Finish_r(&request);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: floor SOCKET WORKERS\n"); return 2; }
  int workers = atoi(argv[2]);
  FCGX_Init();
  unlink(argv[1]);
  listen_fd = FCGX_OpenSocket(argv[1], 128);
  if (listen_fd < 0) { perror("FCGX_OpenSocket"); return 1; }
  chmod(argv[1], 0660);
  pthread_t threads[256];
  for (int i = 0; i < workers && i < 256; i++) pthread_create(&threads[i], NULL, worker, NULL);
  for (int i = 0; i < workers && i < 256; i++) pthread_join(threads[i], NULL);
  return 0;
}
