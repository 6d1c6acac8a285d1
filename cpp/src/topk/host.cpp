// The CPU reference of top-k: each row's (key, position) pairs partitioned at the k-th by rank
// (key descending, then position ascending: among equal elements the lowest positions win), the
// first k sorted when asked.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpuprims/topk/radix_keys.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace topk_detail {

namespace {

template <class T>
void topk_rows(const TopkParams& p, bool sorted) {
  using Traits = KeyTraits<T>;
  using Entry = std::pair<typename Traits::Key, int64_t>;
  const TopkRows& rows = p.rows;
  const auto ranks_before = [](const Entry& a, const Entry& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<Entry> entries(static_cast<size_t>(rows.row_len));
  for (int64_t r = 0; r < rows.num_rows; ++r) {
    const TopkRows::Offsets o = rows.offsets(r);
    const T* x = static_cast<const T*>(p.x) + o.x;
    T* values = static_cast<T*>(p.values) + o.values;
    int64_t* indices = p.indices + o.indices;
    for (int64_t i = 0; i < rows.row_len; ++i) {
      entries[size_t(i)] = {Traits::ranked_key(x[i * rows.x_stride], p.largest), i};
    }
    const auto kth = entries.begin() + rows.k;
    std::nth_element(entries.begin(), kth == entries.end() ? kth - 1 : kth, entries.end(), ranks_before);
    if (sorted) std::sort(entries.begin(), kth, ranks_before);
    for (int64_t j = 0; j < rows.k; ++j) {
      const int64_t pos = entries[size_t(j)].second;
      values[j * rows.values_stride] = x[pos * rows.x_stride];
      indices[j * rows.indices_stride] = pos;
    }
  }
}

}  // namespace

Status topk_host(const TopkParams& p, DType dtype, bool sorted) {
  return visit_numeric_dtype(dtype, [&](auto tag) {
    topk_rows<typename decltype(tag)::type>(p, sorted);
    return Status::ok();
  });
}

}  // namespace topk_detail
}  // namespace gpuprims
