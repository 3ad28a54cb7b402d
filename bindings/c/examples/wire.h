/* The examples' framing on a TCP stream: each message is a 4-byte
 * big-endian length, then that many bytes (a compressed-bloom frame). */
#ifndef CB_EXAMPLE_WIRE_H
#define CB_EXAMPLE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* Writes all of buf; 0 on success. */
static inline int write_all(int fd, const uint8_t *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n <= 0)
      return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Reads exactly len bytes; 0 on success, 1 at a clean end of stream. */
static inline int read_all(int fd, uint8_t *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n == 0 && got == 0)
      return 1;
    if (n <= 0)
      return -1;
    got += (size_t)n;
  }
  return 0;
}

static inline int send_message(int fd, const uint8_t *frame, size_t len) {
  uint8_t head[4];
  head[0] = (uint8_t)(len >> 24);
  head[1] = (uint8_t)(len >> 16);
  head[2] = (uint8_t)(len >> 8);
  head[3] = (uint8_t)len;
  return write_all(fd, head, 4) || write_all(fd, frame, len) ? -1 : 0;
}

#endif
