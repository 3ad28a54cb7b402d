/* A cache peer, in the shape of Squid's digest peers: it keeps the
 * latest filter of what the origin caches, received over TCP, and answers
 * "may the origin have this URL?" without asking it.
 *   peer PORT < urls
 * Connects to the origin on 127.0.0.1:PORT, takes every update (full
 * frames and deltas, length-prefixed) until the origin closes, then
 * answers one line per URL read from standard input: "HIT url" (may be
 * cached there: worth asking) or "MISS url" (certainly not). */
#define _POSIX_C_SOURCE 200809L

#include <compressed_bloom.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "wire.h"

int main(int argc, char **argv) {
  struct sockaddr_in addr;
  int fd, updates = 0;
  cb_subscriber *sub = NULL;
  cb_limits limits;
  static uint8_t frame[1 << 20];
  char line[4096];
  cb_error e;

  if (argc != 2) {
    fprintf(stderr, "usage: peer PORT < urls\n");
    return 2;
  }
  /* A peer knows what it follows: at most 2^24 bits, and the default
   * checks of every frame before anything is allocated. */
  cb_limits_default(&limits);
  limits.max_m = 1u << 24;
  if ((e = cb_subscriber_new(&limits, 0, 0, &sub))) {
    fprintf(stderr, "peer: %s\n", cb_error_name(e));
    return 1;
  }
  fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((uint16_t)atoi(argv[1]));
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("peer: connect");
    return 1;
  }
  for (;;) {
    uint8_t head[4];
    size_t len;
    cb_receive what;
    int r = read_all(fd, head, 4);
    if (r == 1)
      break; /* the origin is done */
    len = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
    if (r != 0 || len == 0 || len > sizeof frame || read_all(fd, frame, len) != 0) {
      fprintf(stderr, "peer: bad message\n");
      return 1;
    }
    e = cb_subscriber_receive(sub, frame, len, &what);
    if (e == CB_OK) {
      updates++;
      printf("update %d: %s, %zu bytes\n", updates, what == CB_RECEIVED_FULL ? "full" : "delta",
             len);
    } else {
      /* Refused (stale, a gap, invalid): keep what is held, go on. */
      printf("refused: %s (%s)\n", cb_error_name(e), cb_last_error_message());
    }
  }
  close(fd);
  while (fgets(line, sizeof line, stdin) != NULL) {
    size_t n = strcspn(line, "\r\n");
    bool hit = false;
    if (n == 0)
      continue;
    line[n] = 0;
    if ((e = cb_subscriber_contains(sub, (const uint8_t *)line, n, &hit))) {
      fprintf(stderr, "peer: %s: %s\n", cb_error_name(e), cb_last_error_message());
      return 1;
    }
    printf("%s %s\n", hit ? "HIT" : "MISS", line);
  }
  cb_subscriber_free(sub);
  return 0;
}
