/* Arbitrary bytes into every decoding entry point of the C API, under
 * AddressSanitizer and UndefinedBehaviorSanitizer (bindings/c/test.sh):
 *   arbitrary_bytes VECTORS_DIR [ITERATIONS]
 * Inputs, from a fixed seed: random byte strings, and the golden frames
 * mutated (bit flips, byte writes, truncations, splices, inserted and
 * deleted runs), half of them with the CRC-32C recomputed so that the
 * mutation reaches the header and payload decoders behind the checksum.
 * Every call must return a code (no crash, no sanitizer report, no
 * CB_ERROR_INTERNAL); whatever decodes must encode again and round-trip,
 * and whatever can be signed must verify. cb_verify_frame and a
 * subscriber with verifying keys take every input too. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <dirent.h>
#include <stdint.h>

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Sets the last four bytes to the CRC-32C of the rest (little-endian). */
static void fix_crc(unsigned char *p, size_t len) {
  uint32_t crc;
  if (len < 5)
    return;
  crc = crc32c(p, len - 4);
  p[len - 4] = (unsigned char)crc;
  p[len - 3] = (unsigned char)(crc >> 8);
  p[len - 2] = (unsigned char)(crc >> 16);
  p[len - 1] = (unsigned char)(crc >> 24);
}

#define MAX_SEEDS 128
#define MAX_LEN (1u << 17)
static unsigned char *seeds[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static int seed_count;

static void load_seeds(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  if (d == NULL) {
    checks_failed++;
    return;
  }
  while ((e = readdir(d)) != NULL && seed_count < MAX_SEEDS) {
    char path[4096];
    size_t n = strlen(e->d_name), len;
    unsigned char *frame;
    if (n < 5 || (strcmp(e->d_name + n - 4, ".cbf") != 0 && strcmp(e->d_name + n - 7, ".digest") != 0))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    frame = read_file(path, &len);
    if (frame == NULL || len == 0 || len > MAX_LEN) {
      free(frame);
      continue;
    }
    seeds[seed_count] = frame;
    seed_len[seed_count++] = len;
  }
  closedir(d);
}

/* One input into buf (at most MAX_LEN bytes); returns its length. */
static size_t make_input(unsigned char *buf) {
  size_t len, i, n;
  const unsigned char *s;
  uint64_t how = next() % 8;
  if (how == 0 || seed_count == 0) {
    len = 1 + (size_t)(next() % 512);
    for (i = 0; i < len; i++)
      buf[i] = (unsigned char)next();
    /* Often with the magic, so the header parser gets past byte 2. */
    if (next() % 2 && len >= 2) {
      buf[0] = 0xCB;
      buf[1] = 0xF1;
      if (len >= 3)
        buf[2] = (unsigned char)(1 + next() % 3);
    }
    if (next() % 2)
      fix_crc(buf, len);
    return len;
  }
  i = (size_t)(next() % (uint64_t)seed_count);
  s = seeds[i];
  len = seed_len[i];
  memcpy(buf, s, len);
  n = 1 + (size_t)(next() % 4);
  while (n-- > 0) {
    size_t at = (size_t)(next() % len);
    switch (next() % 6) {
    case 0: /* a bit flip */
      buf[at] ^= (unsigned char)(1u << (next() % 8));
      break;
    case 1: /* a byte written, biased to the header */
      at = (size_t)(next() % (len < 24 ? len : 24));
      buf[at] = (unsigned char)next();
      break;
    case 2: /* a truncation */
      len = at + 1;
      break;
    case 3: /* a run deleted */
      if (len > 2) {
        size_t run = 1 + (size_t)(next() % 16);
        if (at + run > len)
          run = len - at;
        memmove(buf + at, buf + at + run, len - at - run);
        len -= run;
        if (len == 0)
          len = 1;
      }
      break;
    case 4: /* a run inserted */
      if (len + 16 <= MAX_LEN) {
        size_t run = 1 + (size_t)(next() % 16), k;
        memmove(buf + at + run, buf + at, len - at);
        for (k = 0; k < run; k++)
          buf[at + k] = (unsigned char)next();
        len += run;
      }
      break;
    default: /* the tail of another seed spliced in */
    {
      size_t j = (size_t)(next() % (uint64_t)seed_count), from, take;
      from = (size_t)(next() % seed_len[j]);
      take = seed_len[j] - from;
      if (at + take > MAX_LEN)
        take = MAX_LEN - at;
      memcpy(buf + at, seeds[j] + from, take);
      len = at + take;
      if (len == 0)
        len = 1;
    }
    }
  }
  if (next() % 2)
    fix_crc(buf, len);
  return len;
}

static cb_filter *bases[8];
static int base_count;
/* The signed golden vectors' key (secret: the bytes 0 to 31) and another
 * one, as the keys a receiver trusts. */
static uint8_t secret[CB_KEY_LEN], trusted[2][CB_KEY_LEN];
static cb_limits unlimited;
static unsigned char *signed_buf;

static void note(cb_error e) {
  if ((int)e >= 0 && (int)e < CB_ERROR_COUNT)
    codes_seen[e] = 1;
  if (e == CB_ERROR_INTERNAL) {
    fprintf(stderr, "CB_ERROR_INTERNAL: %s\n", cb_last_error_message());
    checks_failed++;
  } else {
    checks_passed++;
  }
}

/* Whatever decodes must encode and decode to the same frame. */
static void round_trip(const cb_filter *f, const cb_limits *lim) {
  size_t bound = 0, len = 0, len2 = 0;
  unsigned char *a, *b;
  cb_filter *back = NULL;
  note(cb_encode_bound(f, CB_CODING_AUTO, NULL, &bound));
  a = malloc(bound ? bound : 1);
  b = malloc(bound ? bound : 1);
  CHECK_OK(cb_encode(f, CB_CODING_AUTO, NULL, a, bound, &len));
  CHECK_OK(cb_decode(a, len, lim, &back));
  if (back != NULL) {
    CHECK_OK(cb_encode(back, CB_CODING_AUTO, NULL, b, bound, &len2));
    CHECK(len == len2 && memcmp(a, b, len) == 0);
  }
  cb_filter_free(back);
  free(a);
  free(b);
}

/* Verified against the trusted keys; signed, it must verify. */
static void signatures(const unsigned char *in, size_t len, const cb_limits *lim) {
  cb_frame_info info;
  size_t written = 0;
  cb_error e;
  note(cb_verify_frame(in, len, &trusted[0][0], 2, lim, &info));
  note(cb_verify_frame(in, len, NULL, 0, lim, NULL));
  e = cb_sign_frame(in, len, secret, signed_buf, len + CB_SIGN_OVERHEAD, &written);
  note(e);
  if (e == CB_OK) {
    CHECK(written <= len + CB_SIGN_OVERHEAD);
    CHECK_OK(cb_verify_frame(signed_buf, written, &trusted[0][0], 2, &unlimited, &info));
    CHECK(info.has_signer && memcmp(info.signer, trusted[0], CB_KEY_ID_LEN) == 0);
  }
}

static void feed(const unsigned char *in, size_t len, const cb_limits *lim, cb_subscriber *sub,
                 cb_subscriber *keyed) {
  cb_frame_info info;
  cb_filter *f = NULL;
  cb_receive what;
  uint32_t kind;
  int i;
  note(cb_inspect(in, len, lim, &info));
  note(cb_decode(in, len, lim, &f));
  if (f != NULL) {
    round_trip(f, lim);
    cb_filter_free(f);
    f = NULL;
  }
  for (kind = CB_KIND_STANDARD; kind <= CB_KIND_SQUID; kind++) {
    note(cb_decode_as(kind, in, len, lim, &f));
    cb_filter_free(f);
    f = NULL;
  }
  for (i = 0; i < base_count; i++) {
    cb_filter *copy = NULL;
    CHECK_OK(cb_filter_clone(bases[i], &copy));
    note(cb_filter_apply_delta(copy, in, len, lim));
    cb_filter_free(copy);
  }
  note(cb_subscriber_receive(sub, in, len, &what));
  note(cb_subscriber_receive(keyed, in, len, &what));
  signatures(in, len, lim);
  note(cb_squid_import(in, len, lim, &f));
  cb_filter_free(f);
}

int main(int argc, char **argv) {
  unsigned char *buf;
  long iterations, it;
  cb_limits lim[2];
  cb_subscriber *sub = NULL, *keyed = NULL;
  int i, accepted = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR [ITERATIONS]\n", argv[0]);
    return 2;
  }
  iterations = argc > 2 ? atol(argv[2]) : 20000;
  load_seeds(argv[1]);
  /* The default limits, and tight ones (small filters, no expansion
   * floor) that refuse much earlier. */
  cb_limits_default(&lim[0]);
  cb_limits_default(&lim[1]);
  lim[1].max_m = 1u << 20;
  lim[1].expansion_floor = 0;
  lim[1].max_expansion = 64;
  /* Delta bases: the golden frames that decode. */
  for (i = 0; i < seed_count && base_count < 8; i++) {
    cb_filter *f = NULL;
    if (cb_decode(seeds[i], seed_len[i], NULL, &f) == CB_OK)
      bases[base_count++] = f;
  }
  CHECK(seed_count >= 50 && base_count == 8);
  buf = malloc(MAX_LEN + 32);
  signed_buf = malloc(MAX_LEN + 32 + CB_SIGN_OVERHEAD);
  CHECK_OK(cb_subscriber_new(NULL, 0, 0, &sub));
  /* A subscriber that takes only frames signed by the trusted keys. */
  for (i = 0; i < CB_KEY_LEN; i++)
    secret[i] = (uint8_t)i;
  CHECK_OK(cb_public_key(secret, trusted[0]));
  memset(secret, 0x5A, sizeof secret);
  CHECK_OK(cb_public_key(secret, trusted[1]));
  for (i = 0; i < CB_KEY_LEN; i++)
    secret[i] = (uint8_t)i;
  CHECK_OK(cb_limits_unlimited(&unlimited));
  CHECK_OK(cb_subscriber_new(NULL, 0, 0, &keyed));
  CHECK_OK(cb_subscriber_set_verifying_keys(keyed, &trusted[0][0], 2));
  for (it = 0; it < iterations; it++) {
    size_t len = make_input(buf);
    cb_filter *f = NULL;
    feed(buf, len, &lim[it % 2], sub, keyed);
    if (cb_decode(buf, len, &lim[0], &f) == CB_OK)
      accepted++;
    cb_filter_free(f);
  }
  cb_subscriber_free(sub);
  cb_subscriber_free(keyed);
  free(signed_buf);
  for (i = 0; i < base_count; i++)
    cb_filter_free(bases[i]);
  for (i = 0; i < seed_count; i++)
    free(seeds[i]);
  free(buf);
  printf("arbitrary bytes: %ld inputs (%d decoded), %d calls, %d failed\n", iterations, accepted,
         checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
