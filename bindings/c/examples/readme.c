#include <compressed_bloom.h>
#include <stdio.h>

int main(void) {
  cb_plan plan; /* 10,000 keys at a 1% false-positive rate, hash seed 42 */
  cb_filter *sent = NULL, *received = NULL;
  static uint8_t frame[65536];
  size_t len = 0;
  bool hit = false;
  cb_error e = cb_plan_for_kind(CB_KIND_STANDARD, 10000, 0.01, 0, 42, &plan);
  if (e == CB_OK) e = cb_filter_from_plan(&plan, NULL, NULL, 0, &sent);
  for (int i = 0; e == CB_OK && i < 10000; i++) {
    char key[32];
    e = cb_filter_add(sent, (const uint8_t *)key, (size_t)snprintf(key, sizeof key, "key-%d", i));
  }
  if (e == CB_OK) e = cb_encode(sent, CB_CODING_AUTO, NULL, frame, sizeof frame, &len);
  if (e == CB_OK) e = cb_decode(frame, len, NULL, &received); /* limits and CRC first */
  if (e == CB_OK) e = cb_filter_contains(received, (const uint8_t *)"key-7", 5, &hit);
  if (e != CB_OK) {
    fprintf(stderr, "%s: %s\n", cb_error_name(e), cb_last_error_message());
    return 1;
  }
  printf("m = %llu bits, k = %u: a %zu-byte frame; key-7 %s\n", (unsigned long long)plan.m,
         plan.k, len, hit ? "may be present" : "is absent");
  cb_filter_free(sent);
  cb_filter_free(received);
  return 0;
}
