/* The sending side of the peer example: an origin cache that publishes
 * its filter of cached URLs to one peer over TCP.
 *   origin PORT_FILE ROUNDS
 * Listens on 127.0.0.1 (a port the system picks, written to PORT_FILE),
 * accepts one peer, and sends ROUNDS updates: each round caches 500 more
 * URLs and evicts 100 (a counting filter, so that keys can be removed),
 * then sends the publisher's update: a delta where it is smaller than
 * the whole filter, a full frame every 4 updates. */
#define _POSIX_C_SOURCE 200809L

#include <compressed_bloom.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "wire.h"

static int fail(const char *what, cb_error e) {
  fprintf(stderr, "origin: %s: %s (%s)\n", what, cb_error_name(e), cb_last_error_message());
  return 1;
}

static size_t url(char *buf, size_t cap, int i) {
  return (size_t)snprintf(buf, cap, "http://origin.example/object/%d", i);
}

int main(int argc, char **argv) {
  struct sockaddr_in addr;
  socklen_t addr_len = sizeof addr;
  int listener, peer, round, rounds, next_url = 0, oldest = 0;
  cb_plan plan;
  cb_filter *filter = NULL;
  cb_publisher *pub = NULL;
  cb_publisher_options opts;
  static uint8_t frame[1 << 20];
  cb_error e;
  FILE *port_file;
  char tmp[4096];

  if (argc != 3) {
    fprintf(stderr, "usage: origin PORT_FILE ROUNDS\n");
    return 2;
  }
  rounds = atoi(argv[2]);
  /* Plan for 5,000 cached URLs at a 1% false-positive rate, with keys
   * that can be removed. */
  if ((e = cb_plan_recommend(5000, 0.01, 0, CB_NEEDS_DELETION | CB_NEEDS_DELTAS, 1, &plan)))
    return fail("plan", e);
  if ((e = cb_filter_from_plan(&plan, NULL, NULL, 0, &filter)))
    return fail("filter", e);
  cb_publisher_options_default(&opts);
  opts.full_every = 4;
  if ((e = cb_publisher_new(filter, &opts, &pub)))
    return fail("publisher", e);
  cb_filter_free(filter);

  listener = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&addr, &addr_len) != 0) {
    perror("origin: listen");
    return 1;
  }
  /* The port, written whole then renamed, so a reader never sees half. */
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
  port_file = fopen(tmp, "w");
  if (port_file == NULL || fprintf(port_file, "%d\n", ntohs(addr.sin_port)) < 0 ||
      fclose(port_file) != 0 || rename(tmp, argv[1]) != 0) {
    perror("origin: port file");
    return 1;
  }
  peer = accept(listener, NULL, NULL);
  if (peer < 0) {
    perror("origin: accept");
    return 1;
  }
  for (round = 0; round < rounds; round++) {
    size_t len = 0;
    bool is_delta = false;
    cb_update_id id;
    int i;
    for (i = 0; i < 500; i++, next_url++) {
      char u[64];
      if ((e = cb_publisher_add(pub, (const uint8_t *)u, url(u, sizeof u, next_url))))
        return fail("add", e);
    }
    for (i = 0; i < 100 && round > 0; i++, oldest++) {
      char u[64];
      if ((e = cb_publisher_remove(pub, (const uint8_t *)u, url(u, sizeof u, oldest), NULL)))
        return fail("remove", e);
    }
    if ((e = cb_publisher_publish(pub, frame, sizeof frame, &len, &is_delta, &id)))
      return fail("publish", e);
    if (send_message(peer, frame, len) != 0) {
      perror("origin: send");
      return 1;
    }
    fprintf(stderr, "origin: update %llu, %s, %zu bytes\n", (unsigned long long)id.seq,
            is_delta ? "delta" : "full", len);
  }
  close(peer);
  close(listener);
  cb_publisher_free(pub);
  return 0;
}
