// The header from C++17: it compiles with -Wall -Wextra -Werror, its
// declarations have C linkage (this program links against the library),
// and its enums and structs work as C++ types.
#include "compressed_bloom.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

// Handles in RAII wrappers, as a C++ user would hold them.
struct FilterFree {
  void operator()(cb_filter *f) const noexcept { cb_filter_free(f); }
};
using Filter = std::unique_ptr<cb_filter, FilterFree>;

static_assert(sizeof(cb_kind) == sizeof(uint32_t), "cb_kind is a 32-bit enum");
static_assert(CB_OK == 0, "CB_OK is 0");

}  // namespace

int main() {
  cb_filter *raw = nullptr;
  if (cb_filter_new(CB_KIND_PARTITIONED, 3000, 3, 1, &raw) != CB_OK) return 1;
  Filter filter(raw);
  const std::string key = "https://example.com/";
  if (cb_filter_add(filter.get(), reinterpret_cast<const uint8_t *>(key.data()), key.size()) != CB_OK)
    return 1;
  size_t bound = 0, written = 0;
  if (cb_encode_bound(filter.get(), CB_CODING_AUTO, nullptr, &bound) != CB_OK) return 1;
  std::vector<uint8_t> frame(bound);
  if (cb_encode(filter.get(), CB_CODING_AUTO, nullptr, frame.data(), frame.size(), &written) != CB_OK)
    return 1;
  cb_filter *back_raw = nullptr;
  if (cb_decode(frame.data(), written, nullptr, &back_raw) != CB_OK) return 1;
  Filter back(back_raw);
  bool hit = false;
  cb_error e = cb_filter_contains(back.get(), reinterpret_cast<const uint8_t *>(key.data()),
                                  key.size(), &hit);
  cb_filter_info info{};
  if (e != CB_OK || !hit || cb_filter_get_info(back.get(), &info) != CB_OK ||
      info.kind != CB_KIND_PARTITIONED)
    return 1;
  std::printf("C++: %s, a %zu-byte partitioned frame round-trips\n", cb_version(), written);
  return 0;
}
