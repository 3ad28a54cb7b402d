/* A few checks for the C tests: each CHECK counts a pass or prints the
 * failure (with the library's last error message) and counts a failure;
 * CHECK_CODE also records which error codes the tests have reached, so
 * that the suite can show every code is reachable. */
#ifndef CB_TEST_CHECK_H
#define CB_TEST_CHECK_H

#include "compressed_bloom.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks_passed;
static int checks_failed;
static int codes_seen[CB_ERROR_COUNT];

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (cond) {                                                            \
      checks_passed++;                                                     \
    } else {                                                               \
      checks_failed++;                                                     \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n",        \
              __FILE__, __LINE__, #cond, cb_last_error_message());         \
    }                                                                      \
  } while (0)

#define CHECK_CODE(call, expected)                                         \
  do {                                                                     \
    cb_error got_ = (call);                                                \
    if ((int)got_ >= 0 && (int)got_ < CB_ERROR_COUNT)                      \
      codes_seen[got_] = 1;                                                \
    if (got_ == (expected)) {                                              \
      checks_passed++;                                                     \
    } else {                                                               \
      checks_failed++;                                                     \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",         \
              __FILE__, __LINE__, #call, cb_error_name((int)got_),         \
              cb_error_name((int)(expected)), cb_last_error_message());    \
    }                                                                      \
  } while (0)

#define CHECK_OK(call) CHECK_CODE(call, CB_OK)

/* CRC-32C (Castagnoli), as frames carry it. */
static uint32_t crc32c(const unsigned char *p, size_t len) {
  uint32_t crc = 0xFFFFFFFFu;
  size_t i;
  int b;
  for (i = 0; i < len; i++) {
    crc ^= p[i];
    for (b = 0; b < 8; b++)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

/* Reads a whole file into a malloc'd buffer; NULL (and a failed check) if
 * it cannot. */
static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0;
  *len = 0;
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    checks_failed++;
    return NULL;
  }
  for (;;) {
    size_t got;
    if (*len == cap) {
      unsigned char *bigger;
      cap = cap ? cap * 2 : 4096;
      bigger = realloc(buf, cap);
      if (bigger == NULL) {
        free(buf);
        fclose(f);
        checks_failed++;
        return NULL;
      }
      buf = bigger;
    }
    got = fread(buf + *len, 1, cap - *len, f);
    if (got == 0)
      break;
    *len += got;
  }
  fclose(f);
  return buf;
}

#endif
