/* The C API's tests, built with gcc -std=c99 -Wall -Wextra -Werror and
 * AddressSanitizer + UndefinedBehaviorSanitizer by bindings/c/test.sh:
 *   test_api VECTORS_DIR
 * Every golden vector of tests/vectors decoded, queried and re-encoded;
 * a round trip of every kind; plans; deltas; a subscriber fed drops,
 * duplicates and reordering; Squid digests; signed frames and a
 * subscriber that takes only those; every error code reached. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <dirent.h>
#include <stdint.h>

static const char *dir;

static int exists(const char *name, const char *ext) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  f = fopen(path, "rb");
  if (f != NULL)
    fclose(f);
  return f != NULL;
}

static unsigned char *vector(const char *name, const char *ext, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  return read_file(path, len);
}

/* "key-I", the keys the golden vectors were built from. */
static size_t key(char *buf, unsigned long i) {
  return (size_t)snprintf(buf, 32, "key-%lu", i);
}

static int all_keys_present(const cb_filter *f, unsigned long from, unsigned long to) {
  unsigned long i;
  for (i = from; i <= to; i++) {
    char k[32];
    bool hit = false;
    size_t n = key(k, i);
    if (cb_filter_contains(f, (const uint8_t *)k, n, &hit) != CB_OK || !hit)
      return 0;
  }
  return 1;
}

static unsigned long popcount_bytes(const unsigned char *b, size_t len) {
  unsigned long ones = 0;
  size_t i;
  for (i = 0; i < len; i++) {
    unsigned v = b[i];
    while (v) {
      ones += v & 1u;
      v >>= 1;
    }
  }
  return ones;
}

static unsigned long nonzero_nibbles(const unsigned char *b, size_t len) {
  unsigned long n = 0;
  size_t i;
  for (i = 0; i < len; i++)
    n += ((b[i] & 0x0f) != 0) + ((b[i] >> 4) != 0);
  return n;
}

static unsigned long count_lines(const unsigned char *b, size_t len) {
  unsigned long n = 0;
  size_t i;
  for (i = 0; i < len; i++)
    n += b[i] == '\n';
  return n;
}

/* The whole frame of a filter, malloc'd, sized by cb_encode_bound. */
static unsigned char *encode(const cb_filter *f, uint32_t coding, const cb_update_id *id,
                             size_t *len) {
  size_t bound = 0;
  unsigned char *buf;
  *len = 0;
  if (cb_encode_bound(f, coding, id, &bound) != CB_OK)
    return NULL;
  buf = malloc(bound);
  if (buf == NULL || cb_encode(f, coding, id, buf, bound, len) != CB_OK || *len != bound) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int same_bytes(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) {
  return a != NULL && b != NULL && alen == blen && memcmp(a, b, alen) == 0;
}

/* `frame` signed with `secret`, malloc'd, in a buffer of the bound. */
static unsigned char *sign_copy(const unsigned char *frame, size_t len, const uint8_t *secret,
                                size_t *out_len) {
  size_t cap = len + CB_SIGN_OVERHEAD;
  unsigned char *buf = malloc(cap);
  *out_len = 0;
  if (buf == NULL || cb_sign_frame(frame, len, secret, buf, cap, out_len) != CB_OK) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* The key of the signed golden vectors: the secret is the bytes 0 to 31,
 * the public key the one golden_signed.txt lists with the vectors. */
static uint8_t golden_secret[CB_KEY_LEN], golden_public[CB_KEY_LEN];
static int golden_signed_listed, golden_signed;

static int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

static void load_signed(void) {
  static const char prefix[] = "# public key ";
  size_t len, i;
  unsigned char *list = vector("golden_signed", ".txt", &len);
  char *line, *save = NULL;
  uint8_t derived[CB_KEY_LEN];
  int found = 0;
  for (i = 0; i < CB_KEY_LEN; i++)
    golden_secret[i] = (uint8_t)i;
  if (list == NULL)
    return;
  list = realloc(list, len + 1);
  list[len] = 0;
  for (line = strtok_r((char *)list, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, prefix, sizeof prefix - 1) == 0 &&
        strlen(line) == sizeof prefix - 1 + 2 * CB_KEY_LEN) {
      const char *hex = line + sizeof prefix - 1;
      found = 1;
      for (i = 0; i < CB_KEY_LEN; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        found &= hi >= 0 && lo >= 0;
        golden_public[i] = (uint8_t)(hi * 16 + lo);
      }
    } else if (line[0] != '#') {
      golden_signed_listed++;
    }
  }
  free(list);
  CHECK(found);
  /* The listed key is the secret's. */
  CHECK_OK(cb_public_key(golden_secret, derived));
  CHECK(memcmp(derived, golden_public, CB_KEY_LEN) == 0);
}

/* A golden frame's signature: an unsigned frame is refused as such; a
 * signed one verifies with the listed key, names it, and no single-bit
 * flip of it verifies. */
static void test_golden_signature(const char *name, unsigned char *frame, size_t len,
                                  const cb_frame_info *h, const cb_limits *lim) {
  cb_frame_info v;
  size_t bit;
  int flips_verified = 0;
  if (!h->has_signer) {
    CHECK_CODE(cb_verify_frame(frame, len, golden_public, 1, lim, &v), CB_ERROR_UNSIGNED);
    return;
  }
  CHECK(memcmp(h->signer, golden_public, CB_KEY_ID_LEN) == 0 && h->version == 3);
  memset(&v, 0, sizeof v);
  CHECK_OK(cb_verify_frame(frame, len, golden_public, 1, lim, &v));
  CHECK(v.has_signer && memcmp(v.signer, golden_public, CB_KEY_ID_LEN) == 0 &&
        v.frame_len == len && v.header_len == h->header_len && v.is_delta == h->is_delta &&
        v.has_identity == h->has_identity && v.identity.seq == h->identity.seq);
  for (bit = 0; bit < len * 8; bit++) {
    frame[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    if (cb_verify_frame(frame, len, golden_public, 1, lim, NULL) == CB_OK) {
      fprintf(stderr, "golden %s: bit %zu flipped still verifies\n", name, bit);
      flips_verified++;
    }
    frame[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  CHECK(flips_verified == 0);
  golden_signed++;
}

/* Whether two filters hold the same content: their raw frames (or, for
 * kinds without one, their automatic frames) are equal. */
static int same_filter(const cb_filter *a, const cb_filter *b) {
  cb_filter_info ia, ib;
  size_t la, lb;
  unsigned char *fa, *fb;
  int same;
  uint32_t coding;
  if (cb_filter_get_info(a, &ia) != CB_OK || cb_filter_get_info(b, &ib) != CB_OK)
    return 0;
  coding = ia.kind == CB_KIND_SPARSE ? CB_CODING_AUTO : CB_CODING_RAW;
  fa = encode(a, coding, NULL, &la);
  fb = encode(b, coding, NULL, &lb);
  same = same_bytes(fa, la, fb, lb);
  free(fa);
  free(fb);
  return same;
}

/* The coding that writes a full frame's type byte. */
static uint32_t coding_of_type(uint8_t filter_type) {
  switch (filter_type) {
  case 0:
    return CB_CODING_RAW;
  case 1:
    return CB_CODING_ADAPTIVE;
  case 4:
    return CB_CODING_STATIC;
  default:
    return CB_CODING_AUTO;
  }
}

/* A delta vector: its base frame and the keys of the filter it makes. */
struct delta_vector {
  char name[64];
  char base[64];
  unsigned long from, to;
};

static struct delta_vector deltas[32];
static int delta_count;

static void load_deltas(void) {
  size_t len;
  unsigned char *list = vector("golden_delta", ".txt", &len);
  char *line, *save = NULL;
  static const struct delta_vector v3[] = {
      {"v3_ident_delta", "v3_ident_full", 51, 1050},
      {"v3_sparse_delta", "v3_sparse_dense", 51, 350},
      {"v3_counting_delta", "v3_counting_coded", 51, 260},
      {"v3_scalable_delta", "v3_scalable_base", 1, 300},
      /* Signed (golden_signed.txt): a delta of the signed full frame. */
      {"signed_delta", "signed_full", 1, 110},
  };
  size_t i;
  delta_count = 0;
  for (i = 0; i < sizeof v3 / sizeof v3[0]; i++)
    deltas[delta_count++] = v3[i];
  if (list == NULL)
    return;
  list = realloc(list, len + 1);
  list[len] = 0;
  for (line = strtok_r((char *)list, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    struct delta_vector d;
    char type[32];
    if (line[0] == '#')
      continue;
    if (sscanf(line, "%63s %31s %63s %lu %lu", d.name, type, d.base, &d.from, &d.to) == 5 &&
        delta_count < 32)
      deltas[delta_count++] = d;
  }
  free(list);
}

/* A filter holding key-FROM..key-TO with the parameters of `like` (the
 * reference a delta's result is compared with). */
static cb_filter *built_like(const cb_filter *like, unsigned long from, unsigned long to) {
  cb_filter_info info;
  cb_filter *f = NULL;
  unsigned long i;
  if (cb_filter_get_info(like, &info) != CB_OK)
    return NULL;
  if (info.kind == CB_KIND_SPARSE) {
    static char store[1000][32];
    const uint8_t *keys[1000];
    size_t lens[1000];
    size_t n = 0;
    for (i = from; i <= to && n < 1000; i++, n++) {
      lens[n] = key(store[n], i);
      keys[n] = (const uint8_t *)store[n];
    }
    cb_filter_new_sparse(info.m, info.k, info.seed, keys, lens, n, &f);
    return f;
  }
  if (info.kind == CB_KIND_SCALABLE)
    return NULL;
  if (cb_filter_new(info.kind, info.m, info.k, info.seed, &f) != CB_OK)
    return NULL;
  for (i = from; i <= to; i++) {
    char k[32];
    size_t n = key(k, i);
    cb_filter_add(f, (const uint8_t *)k, n);
  }
  return f;
}

static int golden_full, golden_deltas, golden_reencoded, golden_equivalent;

/* A re-encoded frame is unsigned: signed with the golden secret, it is
 * the signed vector again (Ed25519 signatures are deterministic). */
static void resign(unsigned char **frame, size_t *len) {
  size_t signed_len = 0;
  unsigned char *s = *frame != NULL ? sign_copy(*frame, *len, golden_secret, &signed_len) : NULL;
  CHECK(s != NULL);
  free(*frame);
  *frame = s;
  *len = signed_len;
}

/* The vectors whose bytes come from an encoder choice the public API does
 * not offer: the Rust tests pin these with internal encoders. Their
 * re-encoding must decode to the same filter instead. */
static const char *const pinned_by_internal_encoders[] = {
    /* Type 4 with a block size and mode chosen by the test (the encoder
     * chooses its own by the rule that v3_static_rule_* pin). */
    "v3_static_tiny_runs", "v3_static_tiny_bytes", "v3_static_synth", "v3_static_lanes4",
    "v3_static_log40", "v3_static_lanes8",
    /* A plain (type 2) or conditional (type 3) delta forced where the
     * encoder sends the smaller one. */
    "delta_k2", "delta_interleaved", "cdelta_from_empty", "cdelta_to_empty"};

static int pinned(const char *name) {
  size_t i;
  for (i = 0; i < sizeof pinned_by_internal_encoders / sizeof pinned_by_internal_encoders[0]; i++)
    if (strcmp(name, pinned_by_internal_encoders[i]) == 0)
      return 1;
  return 0;
}

/* Checks a decoded vector against its side files (NAME.bits, .nib, .pos,
 * .queries/.answers) and, where it holds key-FROM..key-(FROM+n-1), those
 * keys. */
static void check_content(const char *name, const cb_filter *f, const cb_frame_info *h,
                          unsigned long from) {
  cb_filter_info info;
  size_t len;
  unsigned char *side;
  CHECK_OK(cb_filter_get_info(f, &info));
  CHECK(info.seed == h->seed && info.n == h->n);
  /* A scalable filter's info is its first layer's; its header declares
   * the layers' total. */
  if (info.kind != CB_KIND_SCALABLE)
    CHECK(info.m == h->m && info.k == h->k);
  if (exists(name, ".bits")) {
    side = vector(name, ".bits", &len);
    CHECK(side != NULL && info.ones == popcount_bytes(side, len));
    free(side);
  }
  if (exists(name, ".nib")) {
    side = vector(name, ".nib", &len);
    CHECK(side != NULL && info.ones == nonzero_nibbles(side, len));
    free(side);
  }
  if (exists(name, ".pos")) {
    side = vector(name, ".pos", &len);
    CHECK(side != NULL && info.ones == count_lines(side, len));
    free(side);
  }
  if (exists(name, ".queries")) {
    size_t qlen, alen;
    unsigned char *q = vector(name, ".queries", &qlen);
    unsigned char *a = vector(name, ".answers", &alen);
    size_t qi = 0, ai = 0;
    int wrong = 0, asked = 0;
    while (q != NULL && a != NULL && qi < qlen && ai < alen) {
      size_t end = qi;
      bool hit = false;
      while (end < qlen && q[end] != '\n')
        end++;
      if (cb_filter_contains(f, q + qi, end - qi, &hit) != CB_OK || hit != (a[ai] == '1'))
        wrong++;
      asked++;
      qi = end + 1;
      while (ai < alen && a[ai] != '\n')
        ai++;
      ai++;
    }
    CHECK(wrong == 0 && asked > 0);
    free(q);
    free(a);
  } else if (info.kind != CB_KIND_SQUID && h->n > 0 && strncmp(name, "bip158_", 7) != 0) {
    /* Every other vector holds key-1..key-n (a BIP158 frame holds a
     * block's scripts: tests/golden/bip158.rs queries them). */
    if (!all_keys_present(f, from, from + (unsigned long)h->n - 1))
      fprintf(stderr, "golden %s: a key is missing\n", name);
    CHECK(all_keys_present(f, from, from + (unsigned long)h->n - 1));
  }
}

static void test_golden_full(const char *name, const unsigned char *frame, size_t len,
                             const cb_frame_info *h, const cb_limits *lim) {
  cb_filter *f = NULL;
  unsigned char *again;
  size_t again_len;
  CHECK_OK(cb_decode(frame, len, lim, &f));
  if (f == NULL)
    return;
  check_content(name, f, h, 1);
  again = encode(f, coding_of_type(h->filter_type), h->has_identity ? &h->identity : NULL,
                 &again_len);
  if (h->has_signer)
    resign(&again, &again_len);
  if (same_bytes(again, again_len, frame, len)) {
    golden_reencoded++;
    CHECK(!pinned(name));
  } else if (pinned(name)) {
    cb_filter *back = NULL;
    CHECK_OK(cb_decode(again, again_len, lim, &back));
    CHECK(back != NULL && same_filter(back, f));
    cb_filter_free(back);
    golden_equivalent++;
  } else {
    fprintf(stderr, "golden %s: re-encoded frame differs (%zu bytes, golden %zu)\n", name,
            again_len, len);
    checks_failed++;
  }
  free(again);
  golden_full++;
  CHECK_OK(cb_filter_free(f));
}

static void test_golden_delta(const char *name, const unsigned char *frame, size_t len,
                              const cb_frame_info *h, const cb_limits *lim) {
  int i;
  const struct delta_vector *d = NULL;
  unsigned char *base_frame, *again;
  size_t base_len, again_len;
  cb_filter *base = NULL, *result = NULL, *expected = NULL;
  for (i = 0; i < delta_count; i++)
    if (strcmp(deltas[i].name, name) == 0)
      d = &deltas[i];
  CHECK(d != NULL);
  if (d == NULL)
    return;
  base_frame = vector(d->base, ".cbf", &base_len);
  CHECK_OK(cb_decode(base_frame, base_len, lim, &base));
  CHECK_OK(cb_filter_clone(base, &result));
  /* A full frame is not a delta. */
  CHECK_CODE(cb_filter_apply_delta(result, base_frame, base_len, lim), CB_ERROR_WRONG_FRAME_TYPE);
  CHECK_OK(cb_filter_apply_delta(result, frame, len, lim));
  /* The same delta again: the result is not its base. */
  CHECK_CODE(cb_filter_apply_delta(result, frame, len, lim), CB_ERROR_WRONG_BASE);
  if (strcmp(name, "v3_scalable_delta") == 0) {
    size_t want_len;
    unsigned char *want = vector("v3_scalable", ".cbf", &want_len);
    unsigned char *got = encode(result, CB_CODING_AUTO, NULL, &again_len);
    CHECK(same_bytes(got, again_len, want, want_len));
    free(want);
    free(got);
  } else {
    cb_frame_info rh = *h;
    rh.n = d->to >= d->from ? d->to - d->from + 1 : 0;
    check_content(name, result, &rh, d->from);
    expected = built_like(base, d->from, d->to);
    CHECK(expected != NULL && same_filter(result, expected));
    if (d->to >= d->from)
      CHECK(all_keys_present(result, d->from, d->to));
  }
  /* Re-encoded from its base and result. */
  {
    size_t bound = 0;
    const cb_update_id *id = h->has_identity ? &h->identity : NULL;
    CHECK_OK(cb_delta_bound(base, result, id, &bound));
    again = malloc(bound);
    CHECK_OK(cb_delta_encode(base, result, id, again, bound, &again_len));
    if (h->has_signer)
      resign(&again, &again_len);
    if (same_bytes(again, again_len, frame, len)) {
      golden_reencoded++;
      CHECK(!pinned(name));
    } else if (pinned(name)) {
      cb_filter *rebuilt = NULL;
      CHECK_OK(cb_filter_clone(base, &rebuilt));
      CHECK_OK(cb_filter_apply_delta(rebuilt, again, again_len, lim));
      CHECK(same_filter(rebuilt, result));
      cb_filter_free(rebuilt);
      golden_equivalent++;
    } else {
      fprintf(stderr, "golden %s: re-encoded delta differs (%zu bytes, golden %zu)\n", name,
              again_len, len);
      checks_failed++;
    }
    free(again);
  }
  golden_deltas++;
  free(base_frame);
  cb_filter_free(base);
  cb_filter_free(result);
  cb_filter_free(expected);
}

static void test_goldens(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  cb_limits lim;
  int frames = 0;
  CHECK(d != NULL);
  if (d == NULL)
    return;
  load_deltas();
  load_signed();
  /* The format's own rules only: two goldens are empty multi-block
   * filters, far past the default expansion ratio. */
  CHECK_OK(cb_limits_unlimited(&lim));
  while ((e = readdir(d)) != NULL) {
    char name[256];
    size_t n = strlen(e->d_name), len;
    unsigned char *frame;
    cb_frame_info h;
    if (n < 5 || n >= sizeof name || strcmp(e->d_name + n - 4, ".cbf") != 0)
      continue;
    memcpy(name, e->d_name, n - 4);
    name[n - 4] = 0;
    frame = vector(name, ".cbf", &len);
    if (frame == NULL)
      continue;
    CHECK_OK(cb_inspect(frame, len, &lim, &h));
    CHECK(h.frame_len == len && h.version >= CB_FORMAT_VERSION_MIN &&
          h.version <= CB_FORMAT_VERSION_MAX);
    test_golden_signature(name, frame, len, &h, &lim);
    if (h.is_delta)
      test_golden_delta(name, frame, len, &h, &lim);
    else
      test_golden_full(name, frame, len, &h, &lim);
    frames++;
    free(frame);
  }
  closedir(d);
  CHECK(frames >= 57);
  CHECK(golden_reencoded + golden_equivalent == frames);
  CHECK(golden_signed == golden_signed_listed);
  printf("golden vectors: %d full frames and %d deltas decoded and queried; %d re-encoded byte "
         "for byte, %d (pinned by internal encoders) re-encoded to the same filter; %d signed, "
         "verified and re-signed byte for byte\n",
         golden_full, golden_deltas, golden_reencoded, golden_equivalent, golden_signed);
}

/* The Squid vectors: a digest as Squid sends it, its frame, its queries. */
static void test_squid_vectors(void) {
  size_t dlen, flen, ulen, qlen, elen, out_len = 0;
  unsigned char *digest = vector("squid_500x5", ".digest", &dlen);
  unsigned char *frame = vector("v3_squid", ".cbf", &flen);
  unsigned char *urls = vector("squid_urls", ".txt", &ulen);
  unsigned char *queries = vector("squid_queries", ".txt", &qlen);
  unsigned char *expected = vector("squid_queries", ".expected", &elen);
  cb_filter *imported = NULL, *decoded = NULL, *built = NULL, *standard = NULL;
  unsigned char *out = malloc(dlen + 1);
  size_t i, e = 0, start = 0;
  int wrong = 0, asked = 0;
  bool hit;
  cb_filter_info info;

  CHECK_OK(cb_squid_import(digest, dlen, NULL, &imported));
  CHECK_OK(cb_filter_get_info(imported, &info));
  CHECK(info.kind == CB_KIND_SQUID && info.hash_scheme == 2 && info.k == 4);
  /* Export: Squid's bytes back, byte for byte. */
  CHECK_CODE(cb_squid_export(imported, out, dlen - 1, &out_len), CB_ERROR_DST_TOO_SMALL);
  CHECK(out_len == dlen);
  CHECK_OK(cb_squid_export(imported, out, dlen + 1, &out_len));
  CHECK(same_bytes(out, out_len, digest, dlen));
  /* Queries, as Squid answers them. */
  for (i = 0; i < qlen; i++) {
    if (queries[i] != '\n')
      continue;
    hit = false;
    CHECK_OK(cb_squid_contains(imported, CB_SQUID_METHOD_GET, queries + start, i - start, &hit));
    wrong += hit != (expected[e] == '1');
    asked++;
    while (e < elen && expected[e] != '\n')
      e++;
    e++;
    start = i + 1;
  }
  CHECK(wrong == 0 && asked == 2000);
  /* The frame decodes to the same digest and is reproduced. */
  CHECK_OK(cb_decode(frame, flen, NULL, &decoded));
  CHECK_OK(cb_squid_export(decoded, out, dlen, &out_len));
  CHECK(same_bytes(out, out_len, digest, dlen));
  {
    size_t again_len;
    unsigned char *again = encode(imported, CB_CODING_AUTO, NULL, &again_len);
    CHECK(same_bytes(again, again_len, frame, flen));
    free(again);
  }
  /* Built from its URLs, as Squid builds it. */
  CHECK_OK(cb_filter_new_squid(500, 5, &built));
  for (i = 0, start = 0; i < ulen; i++) {
    if (urls[i] != '\n')
      continue;
    CHECK_OK(cb_squid_add(built, CB_SQUID_METHOD_GET, urls + start, i - start));
    start = i + 1;
  }
  CHECK_OK(cb_squid_export(built, out, dlen, &out_len));
  CHECK(same_bytes(out, out_len, digest, dlen));
  /* The kind's refusals. */
  CHECK_OK(cb_filter_new(CB_KIND_STANDARD, 1000, 3, 0, &standard));
  CHECK_CODE(cb_squid_export(standard, out, dlen, &out_len), CB_ERROR_WRONG_KIND);
  CHECK_CODE(cb_squid_add(standard, 1, urls, 5), CB_ERROR_WRONG_KIND);
  {
    cb_filter *as_squid = NULL;
    size_t slen;
    unsigned char *sframe = encode(standard, CB_CODING_AUTO, NULL, &slen);
    CHECK_OK(cb_decode_as(CB_KIND_SQUID, frame, flen, NULL, &as_squid));
    CHECK_OK(cb_filter_free(as_squid));
    as_squid = NULL;
    CHECK_CODE(cb_decode_as(CB_KIND_SQUID, sframe, slen, NULL, &as_squid), CB_ERROR_WRONG_KIND);
    CHECK(as_squid == NULL);
    free(sframe);
  }
  CHECK_CODE(cb_squid_import(digest, 100, NULL, &standard), CB_ERROR_TRUNCATED);
  {
    cb_limits small;
    cb_limits_default(&small);
    small.max_m = 64;
    CHECK_CODE(cb_squid_import(digest, dlen, &small, &standard), CB_ERROR_LIMIT_EXCEEDED);
  }
  CHECK_CODE(cb_squid_import(digest, dlen - 1, NULL, &standard), CB_ERROR_CORRUPT);
  CHECK_CODE(cb_filter_new_squid(0, 5, &standard), CB_ERROR_INVALID_ARGUMENT);
  cb_filter_free(standard);
  cb_filter_free(imported);
  cb_filter_free(decoded);
  cb_filter_free(built);
  free(digest);
  free(frame);
  free(urls);
  free(queries);
  free(expected);
  free(out);
}

/* Keys "item-0".."item-(N-1)" as the arrays the set constructors take. */
#define SET_SIZE 1000
static char set_store[SET_SIZE][32];
static const uint8_t *set_keys[SET_SIZE];
static size_t set_lens[SET_SIZE];

static void make_set(void) {
  int i;
  for (i = 0; i < SET_SIZE; i++) {
    set_lens[i] = (size_t)snprintf(set_store[i], 32, "item-%d", i);
    set_keys[i] = (const uint8_t *)set_store[i];
  }
}

static cb_filter *filled(uint32_t kind) {
  cb_filter *f = NULL;
  int i;
  switch (kind) {
  case CB_KIND_SPARSE:
    CHECK_OK(cb_filter_new_sparse((uint64_t)1 << 40, 3, 7, set_keys, set_lens, SET_SIZE, &f));
    return f;
  case CB_KIND_RIBBON:
    CHECK_OK(cb_filter_new_ribbon(set_keys, set_lens, SET_SIZE, 0.01, 7, 0, &f));
    return f;
  case CB_KIND_SCALABLE:
    CHECK_OK(cb_filter_new_scalable(100, 0.01, 7, &f));
    break;
  case CB_KIND_SQUID:
    CHECK_OK(cb_filter_new_squid(SET_SIZE, 5, &f));
    break;
  default:
    CHECK_OK(cb_filter_new(kind, 12000, 4, 7, &f));
  }
  for (i = 0; i < SET_SIZE && f != NULL; i++)
    CHECK_OK(cb_filter_add(f, set_keys[i], set_lens[i]));
  return f;
}

static int holds_set(const cb_filter *f) {
  int i;
  for (i = 0; i < SET_SIZE; i++) {
    bool hit = false;
    if (cb_filter_contains(f, set_keys[i], set_lens[i], &hit) != CB_OK || !hit)
      return 0;
  }
  return 1;
}

static void test_round_trips(void) {
  uint32_t kind, coding;
  for (kind = CB_KIND_STANDARD; kind <= CB_KIND_SQUID; kind++) {
    cb_filter *f = filled(kind);
    cb_filter_info info;
    int codings = 0;
    if (f == NULL)
      continue;
    CHECK(holds_set(f));
    CHECK_OK(cb_filter_get_info(f, &info));
    /* A scalable filter skips a key it already reports present (a false
     * positive), so that repeated keys do not fill layers. */
    CHECK(info.kind == kind &&
          (info.n == SET_SIZE || (kind == CB_KIND_SCALABLE && info.n > SET_SIZE * 9 / 10)));
    for (coding = CB_CODING_AUTO; coding <= CB_CODING_RAW; coding++) {
      size_t bound = 0, len = 0, len2 = 0;
      unsigned char *frame, *again;
      cb_filter *back = NULL, *typed = NULL, *other = NULL;
      cb_filter_info back_info;
      cb_error e = cb_encode_bound(f, coding, NULL, &bound);
      if (e == CB_ERROR_INVALID_ARGUMENT)
        continue; /* a coding this kind lacks */
      CHECK_OK(e);
      codings++;
      frame = encode(f, coding, NULL, &len);
      CHECK(frame != NULL && len == bound);
      CHECK_OK(cb_decode(frame, len, NULL, &back));
      CHECK_OK(cb_filter_get_info(back, &back_info));
      CHECK(back_info.kind == kind && back_info.m == info.m && back_info.k == info.k &&
            back_info.seed == info.seed && back_info.n == info.n && back_info.ones == info.ones);
      CHECK(holds_set(back));
      again = encode(back, coding, NULL, &len2);
      CHECK(same_bytes(again, len2, frame, len));
      /* Typed decoding: this kind, and another one refused. */
      CHECK_OK(cb_decode_as(kind, frame, len, NULL, &typed));
      CHECK(typed != NULL && holds_set(typed));
      CHECK_CODE(cb_decode_as(kind == CB_KIND_COUNTING ? CB_KIND_RIBBON : CB_KIND_COUNTING, frame,
                              len, NULL, &other),
                 CB_ERROR_WRONG_KIND);
      CHECK(other == NULL);
      cb_filter_free(back);
      cb_filter_free(typed);
      free(frame);
      free(again);
    }
    /* Every kind has at least auto; most have two or three. */
    CHECK(codings >= (kind == CB_KIND_SPARSE ? 1 : 2));
    /* Keys one at a time: not for the kinds built from their set. */
    if (kind == CB_KIND_SPARSE || kind == CB_KIND_RIBBON)
      CHECK_CODE(cb_filter_add(f, set_keys[0], set_lens[0]), CB_ERROR_WRONG_KIND);
    /* Removal: counting filters only. */
    if (kind == CB_KIND_COUNTING) {
      bool removed = false;
      CHECK_OK(cb_filter_remove(f, set_keys[1], set_lens[1], &removed));
      CHECK(removed);
      CHECK_OK(cb_filter_get_info(f, &info));
      CHECK(info.n == SET_SIZE - 1);
      CHECK_OK(cb_filter_add(f, set_keys[1], set_lens[1]));
    } else {
      CHECK_CODE(cb_filter_remove(f, set_keys[1], set_lens[1], NULL), CB_ERROR_WRONG_KIND);
    }
    CHECK_OK(cb_filter_free(f));
  }
  CHECK_OK(cb_filter_free(NULL));
}

static void test_plans(void) {
  uint32_t kind;
  cb_plan p;
  for (kind = CB_KIND_STANDARD; kind <= CB_KIND_RIBBON; kind++) {
    cb_filter *f = NULL;
    cb_filter_info info;
    size_t len;
    unsigned char *frame;
    /* For a rate... */
    CHECK_OK(cb_plan_for_kind(kind, SET_SIZE, 0.01, 0, 5, &p));
    CHECK(p.kind == kind && p.n == SET_SIZE && p.m > 0 && p.k > 0 && p.fpr <= 0.0101);
    CHECK_OK(cb_filter_from_plan(&p, set_keys, set_lens, SET_SIZE, &f));
    CHECK(f != NULL && holds_set(f));
    CHECK_OK(cb_filter_get_info(f, &info));
    CHECK(info.kind == kind && info.seed == 5);
    frame = encode(f, CB_CODING_AUTO, NULL, &len);
    CHECK(frame != NULL && (double)len < p.expected_bytes * 1.25 + 64);
    free(frame);
    cb_filter_free(f);
    f = NULL;
    /* ... and for a budget: the frame fits. */
    CHECK_OK(cb_plan_for_kind(kind, SET_SIZE, 0, 1500, 5, &p));
    CHECK(p.fpr > 0 && p.fpr < 1 && p.target_bytes == 1500);
    CHECK_OK(cb_filter_from_plan(&p, set_keys, set_lens, SET_SIZE, &f));
    frame = encode(f, CB_CODING_AUTO, NULL, &len);
    CHECK(frame != NULL && len <= 1500);
    free(frame);
    cb_filter_free(f);
  }
  /* A static set: the smallest frame is a ribbon filter. With deltas,
   * deletion or growth, a kind that has them. */
  CHECK_OK(cb_plan_recommend(100000, 0.001, 0, 0, 0, &p));
  CHECK(p.kind == CB_KIND_RIBBON);
  CHECK_OK(cb_plan_recommend(100000, 0.001, 0, CB_NEEDS_DELTAS, 0, &p));
  CHECK(p.kind != CB_KIND_RIBBON);
  CHECK_OK(cb_plan_recommend(1000, 0.01, 0, CB_NEEDS_DELETION, 0, &p));
  CHECK(p.kind == CB_KIND_COUNTING);
  CHECK_OK(cb_plan_recommend(1000, 0.01, 0, CB_NEEDS_GROWTH, 0, &p));
  CHECK(p.kind == CB_KIND_SCALABLE);
  CHECK_CODE(cb_plan_recommend(1000, 0.01, 0, CB_NEEDS_DELETION | CB_NEEDS_GROWTH, 0, &p),
             CB_ERROR_INFEASIBLE);
  CHECK_CODE(cb_plan_for_kind(CB_KIND_STANDARD, 1000000, 0, 10, 0, &p), CB_ERROR_INFEASIBLE);
  CHECK_CODE(cb_plan_for_kind(CB_KIND_STANDARD, 1000, 0.01, 100, 0, &p), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_plan_for_kind(CB_KIND_STANDARD, 1000, 0, 0, 0, &p), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_plan_for_kind(CB_KIND_STANDARD, 1000, 1.5, 0, 0, &p), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_plan_for_kind(CB_KIND_SQUID, 1000, 0.01, 0, 0, &p), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_plan_for_kind(77, 1000, 0.01, 0, 0, &p), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_plan_recommend(1000, 0.01, 0, 0x100, 0, &p), CB_ERROR_INVALID_ARGUMENT);
}

static void test_deltas(void) {
  cb_filter *old_f = filled(CB_KIND_STANDARD), *new_f = NULL, *copy = NULL, *other = NULL;
  cb_filter *counting = filled(CB_KIND_COUNTING);
  unsigned char full[65536], delta[65536];
  size_t full_len = 0, delta_len = 0, bound = 0;
  cb_update_id id = {1, 2, 3}, seq0 = {1, 2, 0};
  cb_frame_info h;
  int i;
  CHECK_OK(cb_filter_clone(old_f, &new_f));
  for (i = 0; i < 50; i++) {
    char k[32];
    size_t n = (size_t)snprintf(k, sizeof k, "new-%d", i);
    CHECK_OK(cb_filter_add(new_f, (const uint8_t *)k, n));
  }
  CHECK_OK(cb_encode(new_f, CB_CODING_AUTO, NULL, full, sizeof full, &full_len));
  CHECK_OK(cb_delta_bound(old_f, new_f, &id, &bound));
  CHECK_CODE(cb_delta_encode(old_f, new_f, &id, delta, bound - 1, &delta_len),
             CB_ERROR_DST_TOO_SMALL);
  CHECK(delta_len == bound);
  CHECK_OK(cb_delta_encode(old_f, new_f, &id, delta, sizeof delta, &delta_len));
  CHECK(delta_len == bound && delta_len < full_len / 2);
  CHECK_OK(cb_inspect(delta, delta_len, NULL, &h));
  CHECK(h.is_delta && h.has_identity && h.identity.seq == 3 && h.identity.stream == 1);
  /* Applied to a copy of the old filter, the delta gives the new one. */
  CHECK_OK(cb_filter_clone(old_f, &copy));
  CHECK_OK(cb_filter_apply_delta(copy, delta, delta_len, NULL));
  CHECK(same_filter(copy, new_f));
  /* ... and to anything else it is refused, leaving the filter as it was. */
  CHECK_CODE(cb_filter_apply_delta(copy, delta, delta_len, NULL), CB_ERROR_WRONG_BASE);
  CHECK(same_filter(copy, new_f));
  CHECK_CODE(cb_filter_apply_delta(counting, delta, delta_len, NULL), CB_ERROR_WRONG_BASE);
  CHECK_CODE(cb_filter_apply_delta(copy, full, full_len, NULL), CB_ERROR_WRONG_FRAME_TYPE);
  CHECK_CODE(cb_decode(delta, delta_len, NULL, &other), CB_ERROR_WRONG_FRAME_TYPE);
  /* No delta between kinds, or between other parameters. */
  CHECK_CODE(cb_delta_encode(old_f, counting, NULL, delta, sizeof delta, &delta_len),
             CB_ERROR_WRONG_KIND);
  CHECK_OK(cb_filter_new(CB_KIND_STANDARD, 12000, 4, 8, &other));
  CHECK_CODE(cb_delta_encode(old_f, other, NULL, delta, sizeof delta, &delta_len),
             CB_ERROR_NO_DELTA);
  CHECK_CODE(cb_delta_encode(old_f, new_f, &seq0, delta, sizeof delta, &delta_len),
             CB_ERROR_INVALID_ARGUMENT);
  /* A counting filter's delta carries removals too. */
  {
    cb_filter *c2 = NULL, *c3 = NULL;
    CHECK_OK(cb_filter_clone(counting, &c2));
    CHECK_OK(cb_filter_remove(c2, set_keys[5], set_lens[5], NULL));
    CHECK_OK(cb_delta_encode(counting, c2, NULL, delta, sizeof delta, &delta_len));
    CHECK_OK(cb_filter_clone(counting, &c3));
    CHECK_OK(cb_filter_apply_delta(c3, delta, delta_len, NULL));
    CHECK(same_filter(c3, c2));
    cb_filter_free(c2);
    cb_filter_free(c3);
  }
  cb_filter_free(old_f);
  cb_filter_free(new_f);
  cb_filter_free(copy);
  cb_filter_free(other);
  cb_filter_free(counting);
}

/* A publisher's updates, kept to be delivered in any order. */
#define UPDATES 12
static unsigned char updates[UPDATES][65536];
static size_t update_len[UPDATES];
static bool update_delta[UPDATES];

static void publish_updates(cb_publisher *pub) {
  int u, i;
  for (u = 0; u < UPDATES; u++) {
    cb_update_id id;
    for (i = 0; i < 20; i++) {
      char k[32];
      size_t n = (size_t)snprintf(k, sizeof k, "u%d-%d", u, i);
      CHECK_OK(cb_publisher_add(pub, (const uint8_t *)k, n));
    }
    if (u == 0) {
      /* A buffer too small keeps the update pending. */
      size_t need = 0;
      CHECK_CODE(cb_publisher_publish(pub, updates[u], 8, &need, &update_delta[u], NULL),
                 CB_ERROR_DST_TOO_SMALL);
      CHECK(need > 8);
    }
    CHECK_OK(cb_publisher_publish(pub, updates[u], sizeof updates[u], &update_len[u],
                                  &update_delta[u], &id));
    CHECK(id.seq == (uint64_t)u && id.stream == 4 && id.epoch == 9);
  }
}

static cb_receive receive(cb_subscriber *s, int u, cb_error expected) {
  cb_receive what = CB_REFUSED_INVALID;
  CHECK_CODE(cb_subscriber_receive(s, updates[u], update_len[u], &what), expected);
  return what;
}

static int subscriber_has(const cb_subscriber *s, int through) {
  int u, i;
  for (u = 0; u <= through; u++)
    for (i = 0; i < 20; i++) {
      char k[32];
      bool hit = false;
      size_t n = (size_t)snprintf(k, sizeof k, "u%d-%d", u, i);
      if (cb_subscriber_contains(s, (const uint8_t *)k, n, &hit) != CB_OK || !hit)
        return 0;
    }
  return 1;
}

static void test_subscriber(void) {
  cb_filter *f = NULL, *held = NULL, *unidentified_src = NULL;
  cb_publisher *pub = NULL;
  cb_subscriber *s = NULL, *other = NULL;
  cb_publisher_options opts;
  cb_update_id v;
  bool has = false, hit;
  unsigned char plain[65536];
  size_t plain_len;
  cb_receive what;
  int u;

  CHECK_OK(cb_filter_new(CB_KIND_STANDARD, 40000, 3, 1, &f));
  CHECK_OK(cb_publisher_options_default(&opts));
  opts.stream = 4;
  opts.epoch = 9;
  opts.epoch_from_clock = 0;
  opts.full_every = 6; /* updates 0 and 6 are full, the rest deltas */
  CHECK_OK(cb_publisher_new(f, &opts, &pub));
  publish_updates(pub);
  for (u = 0; u < UPDATES; u++)
    CHECK(update_delta[u] == (u % 6 != 0));

  CHECK_OK(cb_subscriber_new(NULL, 0, 0, &s));
  CHECK_CODE(cb_subscriber_contains(s, (const uint8_t *)"x", 1, &hit), CB_ERROR_NEED_FULL);
  /* A delta before any full frame. */
  CHECK(receive(s, 1, CB_ERROR_NEED_FULL) == CB_REFUSED_NEED_FULL);
  CHECK(receive(s, 0, CB_OK) == CB_RECEIVED_FULL);
  CHECK(receive(s, 1, CB_OK) == CB_RECEIVED_DELTA);
  /* A duplicate, and a late frame. */
  CHECK(receive(s, 1, CB_ERROR_STALE) == CB_REFUSED_STALE);
  CHECK(receive(s, 0, CB_ERROR_STALE) == CB_REFUSED_STALE);
  /* Reordered: 3 before 2 is a gap; 2 then 3 apply. */
  CHECK(receive(s, 3, CB_ERROR_NEED_FULL) == CB_REFUSED_NEED_FULL);
  CHECK(receive(s, 2, CB_OK) == CB_RECEIVED_DELTA);
  CHECK(receive(s, 3, CB_OK) == CB_RECEIVED_DELTA);
  CHECK(subscriber_has(s, 3));
  /* Dropped: 4 is lost, so 5 cannot apply; the full frame 6 recovers. */
  CHECK(receive(s, 5, CB_ERROR_NEED_FULL) == CB_REFUSED_NEED_FULL);
  CHECK_OK(cb_subscriber_version(s, &has, &v));
  CHECK(has && v.seq == 3);
  CHECK(receive(s, 6, CB_OK) == CB_RECEIVED_FULL);
  CHECK(receive(s, 4, CB_ERROR_STALE) == CB_REFUSED_STALE);
  for (u = 7; u < UPDATES; u++)
    CHECK(receive(s, u, CB_OK) == CB_RECEIVED_DELTA);
  CHECK(subscriber_has(s, UPDATES - 1));
  CHECK_OK(cb_subscriber_version(s, &has, &v));
  CHECK(has && v.seq == UPDATES - 1 && v.stream == 4 && v.epoch == 9);
  /* What it holds is what was published. */
  CHECK_OK(cb_subscriber_filter(s, &held));
  {
    bool got = false;
    CHECK(held != NULL);
    CHECK_OK(cb_filter_contains(held, (const uint8_t *)"u11-19", 6, &got));
    CHECK(got);
  }
  /* A frame without identity could roll it back. */
  CHECK_OK(cb_filter_new(CB_KIND_STANDARD, 40000, 3, 1, &unidentified_src));
  CHECK_OK(cb_encode(unidentified_src, CB_CODING_AUTO, NULL, plain, sizeof plain, &plain_len));
  what = CB_RECEIVED_FULL;
  CHECK_CODE(cb_subscriber_receive(s, plain, plain_len, &what), CB_ERROR_UNORDERED);
  CHECK(what == CB_REFUSED_UNORDERED);
  /* An invalid frame is refused as such. */
  plain[plain_len / 2] ^= 0x10;
  CHECK_CODE(cb_subscriber_receive(s, plain, plain_len, &what), CB_ERROR_CORRUPT);
  CHECK(what == CB_REFUSED_INVALID);
  CHECK(subscriber_has(s, UPDATES - 1));
  /* Another stream. */
  CHECK_OK(cb_subscriber_new(NULL, 1, 5, &other));
  CHECK_CODE(cb_subscriber_receive(other, updates[0], update_len[0], &what),
             CB_ERROR_WRONG_STREAM);
  CHECK(what == CB_REFUSED_WRONG_STREAM);
  CHECK_OK(cb_subscriber_free(other));
  other = NULL;
  /* Limits that exclude the kind. */
  {
    cb_limits only_ribbon;
    cb_limits_default(&only_ribbon);
    only_ribbon.kinds = 1u << CB_KIND_RIBBON;
    CHECK_OK(cb_subscriber_new(&only_ribbon, 0, 0, &other));
    CHECK_CODE(cb_subscriber_receive(other, updates[0], update_len[0], &what),
               CB_ERROR_UNSUPPORTED);
    CHECK(what == CB_REFUSED_INVALID);
  }
  CHECK_OK(cb_subscriber_free(other));
  CHECK_OK(cb_subscriber_free(s));
  CHECK_OK(cb_publisher_free(pub));
  CHECK_OK(cb_subscriber_free(NULL));
  CHECK_OK(cb_publisher_free(NULL));
  cb_filter_free(f);
  cb_filter_free(held);
  cb_filter_free(unidentified_src);
}

/* Sets the CRC of a frame signed or not: the four bytes before the
 * signature of a signed frame, the last four of another. */
static void fix_frame_crc(unsigned char *frame, size_t len, int is_signed) {
  size_t end = len - (is_signed ? 64 : 0) - 4;
  uint32_t crc = crc32c(frame, end);
  frame[end] = (unsigned char)crc;
  frame[end + 1] = (unsigned char)(crc >> 8);
  frame[end + 2] = (unsigned char)(crc >> 16);
  frame[end + 3] = (unsigned char)(crc >> 24);
}

/* The key id as the messages write it: 16 hex digits. */
static void key_id_hex(const uint8_t *public_key, char out[2 * CB_KEY_ID_LEN + 1]) {
  int i;
  for (i = 0; i < CB_KEY_ID_LEN; i++)
    snprintf(out + 2 * i, 3, "%02x", public_key[i]);
}

/* Signing and verifying frames: round trips, refusals, messages. */
static void test_sign_verify(void) {
  uint8_t secret_a[CB_KEY_LEN], secret_b[CB_KEY_LEN], pub_a[CB_KEY_LEN], pub_b[CB_KEY_LEN];
  uint8_t keys[2][CB_KEY_LEN], not_a_point[CB_KEY_LEN] = {2};
  cb_filter *f = filled(CB_KIND_STANDARD), *back = NULL, *changed = NULL;
  cb_update_id id = {3, 1, 5};
  unsigned char *plain, *signed_a, *again, *signed_b, *delta_signed;
  unsigned char delta[65536], small[16];
  size_t plain_len, signed_len, again_len, b_len, delta_len = 0, delta_signed_len, need = 0;
  cb_frame_info h;
  char hex[2 * CB_KEY_ID_LEN + 1];
  int i;
  for (i = 0; i < CB_KEY_LEN; i++) {
    secret_a[i] = (uint8_t)(0xA0 + i);
    secret_b[i] = (uint8_t)(0x40 ^ (i * 7));
  }
  CHECK_OK(cb_public_key(secret_a, pub_a));
  CHECK_OK(cb_public_key(secret_b, pub_b));
  CHECK(memcmp(pub_a, pub_b, CB_KEY_LEN) != 0);
  CHECK_CODE(cb_public_key(NULL, pub_a), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_public_key(secret_a, NULL), CB_ERROR_NULL_POINTER);

  /* Signed: the same frame, named by the key, deterministic. */
  plain = encode(f, CB_CODING_AUTO, &id, &plain_len);
  CHECK_CODE(cb_sign_frame(plain, plain_len, secret_a, small, sizeof small, &need),
             CB_ERROR_DST_TOO_SMALL);
  CHECK(need > plain_len && need <= plain_len + CB_SIGN_OVERHEAD);
  signed_a = sign_copy(plain, plain_len, secret_a, &signed_len);
  CHECK(signed_a != NULL && signed_len == need);
  again = sign_copy(plain, plain_len, secret_a, &again_len);
  CHECK(same_bytes(again, again_len, signed_a, signed_len));
  CHECK_OK(cb_inspect(signed_a, signed_len, NULL, &h));
  CHECK(h.has_signer && memcmp(h.signer, pub_a, CB_KEY_ID_LEN) == 0 && h.frame_len == signed_len &&
        h.has_identity && h.identity.seq == 5);
  CHECK_OK(cb_inspect(plain, plain_len, NULL, &h));
  CHECK(!h.has_signer);
  /* It decodes as the unsigned frame does. */
  CHECK_OK(cb_decode(signed_a, signed_len, NULL, &back));
  CHECK(back != NULL && same_filter(back, f) && holds_set(back));

  /* Verified by its key, alone or among others (in any order). */
  memset(&h, 0, sizeof h);
  CHECK_OK(cb_verify_frame(signed_a, signed_len, pub_a, 1, NULL, &h));
  CHECK(h.has_signer && memcmp(h.signer, pub_a, CB_KEY_ID_LEN) == 0 && h.frame_len == signed_len);
  memcpy(keys[0], pub_b, CB_KEY_LEN);
  memcpy(keys[1], pub_a, CB_KEY_LEN);
  CHECK_OK(cb_verify_frame(signed_a, signed_len, &keys[0][0], 2, NULL, NULL));
  /* Refused: unsigned, another key, no keys, altered. */
  CHECK_CODE(cb_verify_frame(plain, plain_len, pub_a, 1, NULL, &h), CB_ERROR_UNSIGNED);
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, pub_b, 1, NULL, &h), CB_ERROR_UNKNOWN_KEY);
  key_id_hex(pub_a, hex);
  CHECK(strstr(cb_last_error_message(), hex) != NULL);
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, NULL, 0, NULL, &h), CB_ERROR_UNKNOWN_KEY);
  signed_a[signed_len - 1] ^= 0x01; /* the signature */
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, pub_a, 1, NULL, &h), CB_ERROR_BAD_SIGNATURE);
  CHECK(strstr(cb_last_error_message(), hex) != NULL);
  signed_a[signed_len - 1] ^= 0x01;
  /* The payload altered and its CRC made good again: the signature
   * still catches it. Without fixing the CRC it is corrupt. */
  signed_a[signed_len - 100] ^= 0x20;
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, pub_a, 1, NULL, &h), CB_ERROR_CORRUPT);
  fix_frame_crc(signed_a, signed_len, 1);
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, pub_a, 1, NULL, &h), CB_ERROR_BAD_SIGNATURE);
  memcpy(signed_a, again, signed_len);
  CHECK_OK(cb_verify_frame(signed_a, signed_len, pub_a, 1, NULL, &h));
  /* The frame's checks come first: limits, truncation. */
  {
    cb_limits lim;
    CHECK_OK(cb_limits_default(&lim));
    lim.max_m = 100;
    CHECK_CODE(cb_verify_frame(signed_a, signed_len, pub_a, 1, &lim, &h),
               CB_ERROR_LIMIT_EXCEEDED);
    CHECK_CODE(cb_verify_frame(signed_a, signed_len - 1, pub_a, 1, NULL, &h), CB_ERROR_TRUNCATED);
  }
  /* The keys' arguments. */
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, NULL, 1, NULL, &h), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_verify_frame(signed_a, signed_len, not_a_point, 1, NULL, &h),
             CB_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(cb_last_error_message(), "key 0") != NULL);
  CHECK_CODE(cb_verify_frame(NULL, 5, pub_a, 1, NULL, &h), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_sign_frame(plain, plain_len, NULL, delta, sizeof delta, &need),
             CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_sign_frame(plain, 0, secret_a, delta, sizeof delta, &need), CB_ERROR_EMPTY_INPUT);
  CHECK_CODE(cb_sign_frame(plain, plain_len - 1, secret_a, delta, sizeof delta, &need),
             CB_ERROR_TRUNCATED);

  /* Signed again by another key: the same length, the other key's. */
  signed_b = sign_copy(signed_a, signed_len, secret_b, &b_len);
  CHECK(signed_b != NULL && b_len == signed_len);
  CHECK_OK(cb_verify_frame(signed_b, b_len, pub_b, 1, NULL, &h));
  CHECK(memcmp(h.signer, pub_b, CB_KEY_ID_LEN) == 0);
  CHECK_CODE(cb_verify_frame(signed_b, b_len, pub_a, 1, NULL, &h), CB_ERROR_UNKNOWN_KEY);
  /* A forgery that names key A: B's signature does not verify with it. */
  {
    cb_frame_info hb;
    CHECK_OK(cb_inspect(signed_b, b_len, NULL, &hb));
    /* The key id is the last 8 bytes of the metadata, before the payload
     * length's varint: find it by content. */
    for (i = 0; (size_t)i + CB_KEY_ID_LEN <= hb.header_len; i++)
      if (memcmp(signed_b + i, pub_b, CB_KEY_ID_LEN) == 0) {
        memcpy(signed_b + i, pub_a, CB_KEY_ID_LEN);
        break;
      }
    CHECK((size_t)i + CB_KEY_ID_LEN <= hb.header_len);
    fix_frame_crc(signed_b, b_len, 1);
    CHECK_CODE(cb_verify_frame(signed_b, b_len, pub_a, 1, NULL, &h), CB_ERROR_BAD_SIGNATURE);
  }

  /* A signed delta applies as the delta does. */
  CHECK_OK(cb_filter_clone(f, &changed));
  CHECK_OK(cb_filter_add(changed, (const uint8_t *)"one more", 8));
  id.seq = 6;
  CHECK_OK(cb_delta_encode(f, changed, &id, delta, sizeof delta, &delta_len));
  delta_signed = sign_copy(delta, delta_len, secret_a, &delta_signed_len);
  CHECK(delta_signed != NULL && delta_signed_len <= delta_len + CB_SIGN_OVERHEAD);
  CHECK_OK(cb_verify_frame(delta_signed, delta_signed_len, pub_a, 1, NULL, &h));
  CHECK(h.is_delta && h.has_signer);
  CHECK_OK(cb_filter_apply_delta(back, delta_signed, delta_signed_len, NULL));
  CHECK(same_filter(back, changed));

  free(plain);
  free(signed_a);
  free(again);
  free(signed_b);
  free(delta_signed);
  cb_filter_free(f);
  cb_filter_free(back);
  cb_filter_free(changed);
}

/* The raw frame of what a subscriber holds, to see that a refusal left
 * it unchanged. */
static unsigned char *held_frame(const cb_subscriber *s, size_t *len) {
  cb_filter *f = NULL;
  unsigned char *frame;
  *len = 0;
  if (cb_subscriber_filter(s, &f) != CB_OK)
    return NULL;
  frame = encode(f, CB_CODING_RAW, NULL, len);
  cb_filter_free(f);
  return frame;
}

/* Publishes one update with a new key "K-I" into buf; returns its length. */
static size_t publish_one(cb_publisher *p, int i, unsigned char *buf, size_t cap) {
  char k[32];
  size_t n = (size_t)snprintf(k, sizeof k, "K-%d", i), len = 0;
  bool is_delta = false;
  CHECK_OK(cb_publisher_add(p, (const uint8_t *)k, n));
  CHECK_OK(cb_publisher_publish(p, buf, cap, &len, &is_delta, NULL));
  return len;
}

/* Offers a frame the subscriber must refuse with `code` and `outcome`,
 * and checks that it still holds the same version and filter. */
static void refused(cb_subscriber *s, const unsigned char *frame, size_t len, cb_error code,
                    cb_receive outcome) {
  cb_update_id before, after;
  bool has_before = false, has_after = false;
  size_t before_len, after_len;
  unsigned char *held_before = held_frame(s, &before_len), *held_after;
  cb_receive what = CB_RECEIVED_FULL;
  CHECK_OK(cb_subscriber_version(s, &has_before, &before));
  CHECK_CODE(cb_subscriber_receive(s, frame, len, &what), code);
  CHECK(what == outcome);
  CHECK_OK(cb_subscriber_version(s, &has_after, &after));
  held_after = held_frame(s, &after_len);
  CHECK(has_before && has_after && before.epoch == after.epoch && before.seq == after.seq);
  CHECK(same_bytes(held_before, before_len, held_after, after_len));
  free(held_before);
  free(held_after);
}

/* A publisher that signs, and a subscriber that takes only signed frames:
 * it refuses unsigned, foreign and altered frames, newer ones included,
 * with its state unchanged; keys rotate without a refused update. */
static void test_signed_sync(void) {
  static unsigned char frame[65536], forged[65536];
  uint8_t secret_a[CB_KEY_LEN], secret_b[CB_KEY_LEN], secret_c[CB_KEY_LEN];
  uint8_t keys[2][CB_KEY_LEN], bad[2][CB_KEY_LEN];
  cb_filter *f = NULL;
  cb_publisher *pub = NULL, *intruder = NULL;
  cb_subscriber *s = NULL;
  cb_publisher_options opts;
  cb_receive what;
  size_t len, forged_len;
  cb_frame_info h;
  int i;
  for (i = 0; i < CB_KEY_LEN; i++) {
    secret_a[i] = (uint8_t)(i * 3 + 1);
    secret_b[i] = (uint8_t)(255 - i);
    secret_c[i] = (uint8_t)(i * i);
  }
  CHECK_OK(cb_public_key(secret_a, keys[0]));
  CHECK_OK(cb_public_key(secret_b, keys[1]));

  CHECK_OK(cb_filter_new(CB_KIND_STANDARD, 20000, 3, 2, &f));
  CHECK_OK(cb_publisher_options_default(&opts));
  opts.stream = 8;
  opts.epoch = 1;
  opts.epoch_from_clock = 0;
  opts.full_every = 4;
  CHECK_OK(cb_publisher_new(f, &opts, &pub));
  CHECK_OK(cb_publisher_set_signing_key(pub, secret_a));
  CHECK_CODE(cb_publisher_set_signing_key(NULL, secret_a), CB_ERROR_NULL_POINTER);
  /* Full frames of a later epoch of the same stream: newer than anything
   * the real publisher sends, so only the signature stops them. */
  opts.epoch = 50;
  opts.full_every = 1;
  CHECK_OK(cb_publisher_new(f, &opts, &intruder));

  CHECK_OK(cb_subscriber_new(NULL, 1, 8, &s));
  CHECK_OK(cb_subscriber_set_verifying_keys(s, keys[0], 1));
  /* Before anything is held: unsigned refused as such. */
  len = publish_one(intruder, 0, forged, sizeof forged);
  what = CB_RECEIVED_FULL;
  CHECK_CODE(cb_subscriber_receive(s, forged, len, &what), CB_ERROR_UNSIGNED);
  CHECK(what == CB_REFUSED_UNSIGNED);
  /* The signed updates are taken (full frames or deltas, whichever is
   * smaller). */
  for (i = 0; i < 3; i++) {
    len = publish_one(pub, i, frame, sizeof frame);
    CHECK_OK(cb_inspect(frame, len, NULL, &h));
    CHECK(h.has_signer && memcmp(h.signer, keys[0], CB_KEY_ID_LEN) == 0);
    CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
    CHECK(i > 0 || what == CB_RECEIVED_FULL);
  }
  /* Refused, state unchanged: unsigned, signed by an unknown key, the
   * real update with a bit of its signature flipped, or of its payload
   * with the CRC made good. */
  forged_len = publish_one(intruder, 1, forged, sizeof forged);
  refused(s, forged, forged_len, CB_ERROR_UNSIGNED, CB_REFUSED_UNSIGNED);
  CHECK_OK(cb_publisher_set_signing_key(intruder, secret_c));
  forged_len = publish_one(intruder, 2, forged, sizeof forged);
  refused(s, forged, forged_len, CB_ERROR_UNKNOWN_KEY, CB_REFUSED_UNKNOWN_KEY);
  len = publish_one(pub, 3, frame, sizeof frame);
  frame[len - 30] ^= 0x04;
  refused(s, frame, len, CB_ERROR_BAD_SIGNATURE, CB_REFUSED_BAD_SIGNATURE);
  frame[len - 30] ^= 0x04;
  CHECK_OK(cb_inspect(frame, len, NULL, &h));
  frame[h.header_len] ^= 0x80;
  fix_frame_crc(frame, len, 1);
  refused(s, frame, len, CB_ERROR_BAD_SIGNATURE, CB_REFUSED_BAD_SIGNATURE);
  frame[h.header_len] ^= 0x80;
  fix_frame_crc(frame, len, 1);
  CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
  /* Keys that are not public keys are refused, and the old ones kept. */
  memcpy(bad[0], keys[1], CB_KEY_LEN);
  memset(bad[1], 0, CB_KEY_LEN);
  bad[1][0] = 2;
  CHECK_CODE(cb_subscriber_set_verifying_keys(s, &bad[0][0], 2), CB_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(cb_last_error_message(), "key 1") != NULL);
  CHECK_CODE(cb_subscriber_set_verifying_keys(s, NULL, 1), CB_ERROR_NULL_POINTER);
  refused(s, forged, forged_len, CB_ERROR_UNKNOWN_KEY, CB_REFUSED_UNKNOWN_KEY);

  /* Rotation: the subscriber holds A and B, the publisher moves to B,
   * then the subscriber drops A. No update is refused. */
  CHECK_OK(cb_subscriber_set_verifying_keys(s, &keys[0][0], 2));
  len = publish_one(pub, 4, frame, sizeof frame);
  CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
  CHECK_OK(cb_publisher_set_signing_key(pub, secret_b));
  for (i = 5; i < 7; i++) {
    len = publish_one(pub, i, frame, sizeof frame);
    CHECK_OK(cb_inspect(frame, len, NULL, &h));
    CHECK(h.has_signer && memcmp(h.signer, keys[1], CB_KEY_ID_LEN) == 0);
    CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
  }
  CHECK_OK(cb_subscriber_set_verifying_keys(s, keys[1], 1));
  len = publish_one(pub, 7, frame, sizeof frame);
  CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
  /* The retired key A no longer passes, even on a newer version. */
  CHECK_OK(cb_publisher_set_signing_key(intruder, secret_a));
  forged_len = publish_one(intruder, 3, forged, sizeof forged);
  refused(s, forged, forged_len, CB_ERROR_UNKNOWN_KEY, CB_REFUSED_UNKNOWN_KEY);
  {
    bool hit = false;
    cb_update_id v;
    bool has = false;
    for (i = 0; i < 8; i++) {
      char k[32];
      size_t n = (size_t)snprintf(k, sizeof k, "K-%d", i);
      CHECK_OK(cb_subscriber_contains(s, (const uint8_t *)k, n, &hit));
      CHECK(hit);
    }
    CHECK_OK(cb_subscriber_version(s, &has, &v));
    CHECK(has && v.epoch == 1 && v.seq == 7);
  }
  /* No keys: unsigned frames are taken again; a publisher without a key
   * sends them. */
  CHECK_OK(cb_subscriber_set_verifying_keys(s, NULL, 0));
  CHECK_OK(cb_publisher_set_signing_key(pub, NULL));
  len = publish_one(pub, 8, frame, sizeof frame);
  CHECK_OK(cb_inspect(frame, len, NULL, &h));
  CHECK(!h.has_signer);
  CHECK_OK(cb_subscriber_receive(s, frame, len, &what));
  CHECK_OK(cb_subscriber_free(s));
  CHECK_OK(cb_publisher_free(pub));
  CHECK_OK(cb_publisher_free(intruder));
  cb_filter_free(f);
}

/* The refusals that are not about one kind or one feature. */
static void test_errors(void) {
  cb_filter *f = filled(CB_KIND_STANDARD), *out = NULL;
  unsigned char frame[65536], small[4];
  size_t len = 0, need = 0, cut;
  cb_limits lim;
  bool hit;
  CHECK_OK(cb_encode(f, CB_CODING_AUTO, NULL, frame, sizeof frame, &len));

  /* NULL arguments and zero lengths. */
  CHECK_CODE(cb_filter_contains(NULL, (const uint8_t *)"a", 1, &hit), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_filter_contains(f, NULL, 1, &hit), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_filter_contains(f, (const uint8_t *)"a", 1, NULL), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_filter_contains(f, (const uint8_t *)"a", 0, &hit), CB_ERROR_EMPTY_INPUT);
  CHECK_CODE(cb_decode(NULL, 10, NULL, &out), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_decode(frame, 0, NULL, &out), CB_ERROR_EMPTY_INPUT);
  CHECK_CODE(cb_decode(frame, len, NULL, NULL), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_encode(f, CB_CODING_AUTO, NULL, NULL, 100, &len), CB_ERROR_NULL_POINTER);
  CHECK_CODE(cb_filter_add(f, (const uint8_t *)"", 0), CB_ERROR_EMPTY_INPUT);
  CHECK_CODE(cb_filter_new_ribbon(NULL, set_lens, 3, 0.01, 0, 0, &out), CB_ERROR_NULL_POINTER);
  {
    const uint8_t *keys[2] = {(const uint8_t *)"a", NULL};
    size_t lens[2] = {1, 1};
    CHECK_CODE(cb_filter_new_ribbon(keys, lens, 2, 0.01, 0, 0, &out), CB_ERROR_NULL_POINTER);
    lens[1] = 0;
    keys[1] = (const uint8_t *)"b";
    CHECK_CODE(cb_filter_new_sparse(1000, 2, 0, keys, lens, 2, &out), CB_ERROR_EMPTY_INPUT);
  }
  CHECK_CODE(cb_format_versions(NULL, NULL), CB_ERROR_NULL_POINTER);
  CHECK(out == NULL);

  /* Invalid arguments. */
  CHECK_CODE(cb_filter_new(CB_KIND_STANDARD, 0, 3, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new(CB_KIND_STANDARD, 1000, 65, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new(CB_KIND_PARTITIONED, 1000, 3, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new(CB_KIND_RIBBON, 1000, 3, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new(99, 1000, 3, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new_scalable(0, 0.01, 0, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_filter_new_ribbon(set_keys, set_lens, 10, 1.0, 0, 0, &out),
             CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_encode(f, 9, NULL, frame, sizeof frame, &need), CB_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(cb_decode_as(42, frame, len, NULL, &out), CB_ERROR_INVALID_ARGUMENT);
  CHECK(out == NULL);

  /* A buffer too small: the length needed comes back, nothing is
   * written, and the retry copies the frame. */
  memset(small, 0xAA, sizeof small);
  CHECK_CODE(cb_encode(f, CB_CODING_AUTO, NULL, small, sizeof small, &need),
             CB_ERROR_DST_TOO_SMALL);
  CHECK(need == len && small[0] == 0xAA);
  {
    unsigned char *again = malloc(need);
    size_t again_len = 0;
    CHECK_OK(cb_encode(f, CB_CODING_AUTO, NULL, again, need, &again_len));
    CHECK(same_bytes(again, again_len, frame, len));
    free(again);
  }

  /* Every truncation, with the offset where the bytes end. */
  for (cut = 1; cut < len; cut += (cut < 64 ? 1 : 97)) {
    CHECK_CODE(cb_decode(frame, cut, NULL, &out), CB_ERROR_TRUNCATED);
    CHECK(cb_last_error_offset() == (int64_t)cut);
  }
  CHECK(out == NULL);
  /* Corruption: bad magic, a flipped payload bit (the checksum), trailing
   * bytes. */
  frame[0] ^= 0xFF;
  CHECK_CODE(cb_decode(frame, len, NULL, &out), CB_ERROR_CORRUPT);
  CHECK(cb_last_error_offset() == 0 && strlen(cb_last_error_message()) > 0);
  frame[0] ^= 0xFF;
  frame[len - 10] ^= 0x04;
  CHECK_CODE(cb_decode(frame, len, NULL, &out), CB_ERROR_CORRUPT);
  frame[len - 10] ^= 0x04;
  frame[len] = 0;
  CHECK_CODE(cb_decode(frame, len + 1, NULL, &out), CB_ERROR_CORRUPT);
  CHECK(cb_last_error_offset() == (int64_t)len);
  /* A format version from the future. */
  {
    unsigned char version = frame[2];
    frame[2] = 9;
    CHECK_CODE(cb_decode(frame, len, NULL, &out), CB_ERROR_UNSUPPORTED);
    CHECK(cb_last_error_offset() == 2);
    frame[2] = version;
  }
  /* Oversized for the receiver's limits; nothing allocated. */
  CHECK_OK(cb_limits_default(&lim));
  lim.max_m = 1000;
  CHECK_CODE(cb_decode(frame, len, &lim, &out), CB_ERROR_LIMIT_EXCEEDED);
  CHECK_OK(cb_limits_default(&lim));
  lim.max_frame_len = 10;
  CHECK_CODE(cb_decode(frame, len, &lim, &out), CB_ERROR_LIMIT_EXCEEDED);
  CHECK(out == NULL);
  /* The frame is still good after all that. */
  CHECK_OK(cb_decode(frame, len, NULL, &out));
  CHECK(out != NULL && holds_set(out));
  CHECK_OK(cb_filter_free(out));
  out = NULL;

  /* The last error is per call: a success clears it. */
  CHECK_CODE(cb_decode(frame, 3, NULL, &out), CB_ERROR_TRUNCATED);
  CHECK(strlen(cb_last_error_message()) > 0);
  CHECK_OK(cb_filter_contains(f, (const uint8_t *)"a", 1, &hit));
  CHECK(strlen(cb_last_error_message()) == 0 && cb_last_error_offset() == -1);

  /* Memory that cannot be had: 2^53 bytes. */
  CHECK_CODE(cb_filter_new(CB_KIND_STANDARD, (uint64_t)1 << 56, 3, 0, &out),
             CB_ERROR_OUT_OF_MEMORY);
  CHECK(out == NULL);
  /* The panic barrier (Rust's panic hook prints the panic first). */
  fprintf(stderr, "test_api: the panic message that follows is expected\n");
  CHECK_CODE(cb_selftest_panic(), CB_ERROR_INTERNAL);
  CHECK(strstr(cb_last_error_message(), "internal") != NULL);
  cb_filter_free(f);
}

static void test_version(void) {
  uint8_t min = 0, max = 0;
  int code;
  CHECK(cb_version_number() == CB_VERSION_NUMBER);
  CHECK(strlen(cb_version()) >= 5 && strchr(cb_version(), '.') != NULL);
  CHECK_OK(cb_format_versions(&min, &max));
  CHECK(min == CB_FORMAT_VERSION_MIN && max == CB_FORMAT_VERSION_MAX && min == 1 && max == 3);
  for (code = 0; code < CB_ERROR_COUNT; code++)
    CHECK(strncmp(cb_error_name(code), "CB_", 3) == 0);
  CHECK(strcmp(cb_error_name(CB_ERROR_TRUNCATED), "CB_ERROR_TRUNCATED") == 0);
  CHECK(strcmp(cb_error_name(-1), "CB_ERROR_UNKNOWN") == 0);
  CHECK(strcmp(cb_error_name(CB_ERROR_COUNT), "CB_ERROR_UNKNOWN") == 0);
}

int main(int argc, char **argv) {
  int code, unseen = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  make_set();
  test_version();
  test_goldens();
  test_squid_vectors();
  test_round_trips();
  test_plans();
  test_deltas();
  test_subscriber();
  test_sign_verify();
  test_signed_sync();
  test_errors();
  for (code = 0; code < CB_ERROR_COUNT; code++)
    if (!codes_seen[code]) {
      fprintf(stderr, "error code %s was never returned\n", cb_error_name(code));
      unseen++;
    }
  CHECK(unseen == 0);
  printf("C tests: %d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
